import { describe, expect, it } from "@jest/globals";
import sharp from "sharp";
import {
  MAX_DECODED_PIXELS,
  MAX_SENT_BYTES,
  MAX_SENT_SIDE,
  sentImage,
  UndecodableImage,
  userPartsForKernel,
} from "../../lib/a2a/images.js";
import { MAX_IMAGE_BYTES } from "../../lib/validation.js";
import type { ValidRunInput } from "../../lib/model/run-input.js";

const MARKER = "agui-secret-location-marker";
const exif = { IFD0: { Make: "AguiCam", Artist: MARKER }, IFD3: { GPSLatitudeRef: "N", GPSLatitude: "35/1 41/1 0/1" } };

/** Noise does not compress: what makes an image large in bytes, not only in pixels. */
const noise = (width: number, height: number, channels: 3 | 4 = 3) =>
  sharp({ create: { width, height, channels, background: "#000000", noise: { type: "gaussian", mean: 128, sigma: 50 } } });
const plain = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 4, background: { r: 30, g: 90, b: 200, alpha: 0.5 } } });

async function expectWithinTargets(image: { bytes: Buffer; width: number; height: number }) {
  expect(image.bytes.length).toBeLessThanOrEqual(MAX_SENT_BYTES);
  expect(Math.max(image.width, image.height)).toBeLessThanOrEqual(MAX_SENT_SIDE);
  const metadata = await sharp(image.bytes).metadata();
  expect([metadata.width, metadata.height]).toEqual([image.width, image.height]);
  return metadata;
}

describe("sentImage", () => {
  it("sends a small image byte for byte, under the media type its bytes show", async () => {
    const png = await plain(640, 480).png().toBuffer();
    const sent = await sentImage(png);
    expect(sent).toMatchObject({ mediaType: "image/png", width: 640, height: 480, resized: false });
    expect(sent.bytes.equals(png)).toBe(true);
    const jpeg = await noise(800, 600).jpeg({ quality: 90 }).withExif(exif).toBuffer();
    const sentJpeg = await sentImage(jpeg);
    expect(sentJpeg.resized).toBe(false);
    // As the reference: an image within the targets is not re-encoded, so its metadata stays.
    expect(sentJpeg.bytes.equals(jpeg)).toBe(true);
  });

  it("scales a wide PNG with transparency to 2000 px and keeps it a PNG with its alpha", async () => {
    const png = await plain(4000, 1000).png().toBuffer();
    const sent = await sentImage(png);
    expect(sent).toMatchObject({ mediaType: "image/png", width: 2000, height: 500, resized: true });
    const metadata = await expectWithinTargets(sent);
    expect(metadata.format).toBe("png");
    expect(metadata.hasAlpha).toBe(true);
  });

  it("turns a PNG too large for the byte target even at 2000 px into a JPEG", async () => {
    const png = await noise(2200, 1000).png().toBuffer();
    expect(png.length).toBeGreaterThan(MAX_SENT_BYTES);
    expect(png.length).toBeLessThanOrEqual(MAX_IMAGE_BYTES);
    const sent = await sentImage(png);
    expect(sent).toMatchObject({ mediaType: "image/jpeg", width: 2000, height: 909, resized: true });
    expect((await expectWithinTargets(sent)).format).toBe("jpeg");
  });

  it("re-encodes a large JPEG upright, within the targets, with its EXIF and GPS gone", async () => {
    const jpeg = await noise(3000, 2000).jpeg({ quality: 90 }).withMetadata({ orientation: 6 }).withExif(exif).toBuffer();
    const received = await sharp(jpeg).metadata();
    expect(received.exif).toBeDefined();
    expect(jpeg.includes(MARKER)).toBe(true);
    const sent = await sentImage(jpeg);
    // Orientation 6 is a quarter turn: 3000 × 2000 stored is 2000 × 3000 seen.
    expect(sent).toMatchObject({ mediaType: "image/jpeg", width: 1333, height: 2000, resized: true });
    const metadata = await expectWithinTargets(sent);
    expect(metadata.exif).toBeUndefined();
    expect(metadata.xmp).toBeUndefined();
    expect(metadata.icc).toBeUndefined();
    expect(metadata.orientation).toBeUndefined();
    expect(sent.bytes.includes(MARKER)).toBe(false);
  });

  it("resizes an image only too large in bytes, never enlarging it", async () => {
    const png = await noise(1500, 1400).png().toBuffer();
    expect(png.length).toBeGreaterThan(MAX_SENT_BYTES);
    const sent = await sentImage(png);
    expect(sent).toMatchObject({ width: 1500, height: 1400, resized: true });
    await expectWithinTargets(sent);
  });

  it("refuses damaged data, a format other than PNG, JPEG, GIF or WebP, and too many pixels", async () => {
    const png = await noise(400, 300).png().toBuffer();
    await expect(sentImage(png.subarray(0, png.length / 2))).rejects.toBeInstanceOf(UndecodableImage);
    await expect(sentImage(Buffer.from("not an image at all"))).rejects.toBeInstanceOf(UndecodableImage);
    await expect(sentImage(await plain(64, 64).tiff().toBuffer())).rejects.toBeInstanceOf(UndecodableImage);
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>');
    await expect(sentImage(svg)).rejects.toBeInstanceOf(UndecodableImage);
    // Small in bytes, far more pixels than MAX_DECODED_PIXELS once decoded.
    const side = Math.ceil(Math.sqrt(MAX_DECODED_PIXELS)) + 1;
    const bomb = await sharp({ create: { width: side, height: side, channels: 3, background: "#336699" } })
      .png({ compressionLevel: 9 })
      .toBuffer();
    expect(bomb.length).toBeLessThan(MAX_SENT_BYTES);
    await expect(sentImage(bomb)).rejects.toThrow(/pixel limit/);
  });
});

describe("userPartsForKernel", () => {
  const imagePart = (bytes: Buffer, mimeType: string) =>
    ({ type: "image", source: { type: "data", value: bytes.toString("base64"), mimeType } }) as const;
  const input = (content: unknown[]): ValidRunInput =>
    ({
      threadId: "thread-1",
      runId: "run-1",
      state: {},
      messages: [
        { id: "m-0", role: "user", content: "earlier" },
        { id: "a-0", role: "assistant", content: "ok" },
        { id: "m-1", role: "user", content },
      ],
      tools: [],
      context: [],
      forwardedProps: { iacCode: { schemaVersion: 1, rosInvocationId: "ros-1", cwd: "/tmp" } },
    }) as ValidRunInput;

  it("gives the latest user message's parts, large images made sendable and small ones as sent", async () => {
    const small = await plain(100, 100).png().toBuffer();
    const large = await noise(3000, 2000).jpeg({ quality: 90 }).toBuffer();
    const parts = await userPartsForKernel(
      input([
        { type: "text", text: "look" },
        imagePart(small, "image/png"),
        imagePart(large, "IMAGE/JPEG"),
        imagePart(small, "image/jpeg"),
      ]),
    );
    expect(parts).toHaveLength(4);
    expect(parts![0]).toEqual({ text: "look" });
    expect(parts![1]).toEqual({ data: { filename: "agui-image-1", bytes: small.toString("base64") }, mediaType: "image/png" });
    const resized = parts![2] as { data: { filename: string; bytes: string }; mediaType: string };
    expect(resized.mediaType).toBe("image/jpeg");
    expect(resized.data.filename).toBe("agui-image-2");
    const sent = await sharp(Buffer.from(resized.data.bytes, "base64")).metadata();
    expect([sent.width, sent.height]).toEqual([2000, 1333]);
    // A PNG declared as JPEG goes under the type its bytes show, its bytes untouched.
    expect(parts![3]).toEqual({ data: { filename: "agui-image-3", bytes: small.toString("base64") }, mediaType: "image/png" });
  });

  it("answers an image it cannot decode with INVALID_INPUT imageUndecodable at the part's place", async () => {
    const png = await plain(100, 100).png().toBuffer();
    const broken = input([{ type: "text", text: "look" }, imagePart(png.subarray(0, 40), "image/png")]);
    await expect(userPartsForKernel(broken)).rejects.toMatchObject({
      code: "INVALID_INPUT",
      params: { reason: "imageUndecodable", at: "/messages/2/content/1/source/value", phrase: "invalid" },
    });
  });

  it("is undefined without a user message, and leaves text alone", async () => {
    const none = { ...input([]), messages: [{ id: "a", role: "assistant", content: "hi" }] } as ValidRunInput;
    expect(await userPartsForKernel(none)).toBeUndefined();
    expect(await userPartsForKernel(input([{ type: "text", text: "only text" }]))).toEqual([{ text: "only text" }]);
  });
});
