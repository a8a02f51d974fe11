import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import sharp from "sharp";
import { MAX_SENT_BYTES, MAX_SENT_SIDE } from "../../lib/a2a/images.js";
import { translate } from "../../lib/i18n/index.js";
import { expectValidRun } from "../support/agui.js";
import { postRun, runInput, startHarness, uniqueId, type Harness } from "../support/service.js";

const MARKER = "agui-secret-location-marker";

type SentPart = { text: string } | { data: { filename: string; bytes: string }; mediaType: string };

const imagePart = (bytes: Buffer, mimeType: string, filename?: string) => ({
  type: "image",
  source: { type: "data", mimeType, value: bytes.toString("base64") },
  ...(filename ? { metadata: { filename } } : {}),
});

function withContent(content: unknown[]) {
  const input = runInput("chat");
  return { ...input, messages: [{ id: uniqueId("msg"), role: "user", content }] };
}

describe("images through the service, as the kernel receives them", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(() => harness.close());

  const sentParts = (messageId: string) =>
    harness.kernel.received
      .filter((call) => call.method === "SendStreamingMessage")
      .map((call) => (call.params as { message: { messageId: string; parts: SentPart[] } }).message)
      .find((message) => message.messageId === messageId)?.parts;

  it("sends a large photo resized, upright and without its EXIF, and a small image byte for byte", async () => {
    const photo = await sharp({
      create: { width: 3000, height: 2000, channels: 3, background: "#000000", noise: { type: "gaussian", mean: 128, sigma: 50 } },
    })
      .jpeg({ quality: 90 })
      .withMetadata({ orientation: 6 })
      .withExif({ IFD0: { Make: "AguiCam", Artist: MARKER }, IFD3: { GPSLatitudeRef: "N", GPSLatitude: "35/1 41/1 0/1" } })
      .toBuffer();
    expect(photo.length).toBeGreaterThan(MAX_SENT_BYTES);
    const icon = await sharp({ create: { width: 64, height: 48, channels: 4, background: { r: 200, g: 10, b: 10, alpha: 0.5 } } })
      .png()
      .toBuffer();
    const input = withContent([
      { type: "text", text: "chat" },
      imagePart(photo, "image/jpeg", "holiday.jpg"),
      imagePart(icon, "image/png", "icon.png"),
    ]);

    const { status, events } = await postRun(harness.service.url, input);
    expect(status).toBe(200);
    await expectValidRun(events);
    expect(events.at(-1)?.type).toBe(EventType.RUN_FINISHED);

    const parts = sentParts(input.messages[0]!.id)!;
    expect(parts).toHaveLength(3);
    expect(parts[0]).toEqual({ text: "chat" });
    const [resized, untouched] = parts.slice(1) as Array<Extract<SentPart, { data: unknown }>>;
    expect(resized!.mediaType).toBe("image/jpeg");
    expect(resized!.data.filename).toBe("holiday.jpg");
    const resizedBytes = Buffer.from(resized!.data.bytes, "base64");
    expect(resizedBytes.length).toBeLessThanOrEqual(MAX_SENT_BYTES);
    expect(resizedBytes.includes(MARKER)).toBe(false);
    const metadata = await sharp(resizedBytes).metadata();
    // Stored 3000 × 2000 with orientation 6: seen 2000 × 3000, sent upright at most 2000 px a side.
    expect([metadata.width, metadata.height]).toEqual([1333, MAX_SENT_SIDE]);
    expect(metadata.exif).toBeUndefined();
    expect(metadata.orientation).toBeUndefined();
    expect(untouched).toEqual({ data: { filename: "icon.png", bytes: icon.toString("base64") }, mediaType: "image/png" });
  });

  it("answers an image it cannot decode with 400 INVALID_INPUT, before the kernel hears of the run", async () => {
    const png = await sharp({ create: { width: 300, height: 200, channels: 3, background: "#123456" } })
      .png()
      .toBuffer();
    // Valid base64 of a PNG cut short: validation admits it, decoding does not.
    const input = withContent([{ type: "text", text: "chat" }, imagePart(png.subarray(0, 48), "image/png")]);
    const calls = harness.kernel.received.length;

    const { status, json } = await postRun(harness.service.url, input);
    expect(status).toBe(400);
    expect(json).toEqual({
      error: {
        code: "INVALID_INPUT",
        message: "The image data is invalid.",
        detail: translate("detail.attached", "en", {
          message: translate("INVALID_INPUT.imageUndecodable.detail", "en"),
          detail: "/messages/0/content/1/source/value: is invalid",
        }),
      },
    });
    expect(harness.kernel.received.slice(calls).filter((call) => call.method === "SendStreamingMessage")).toEqual([]);
    expect(sentParts(input.messages[0]!.id)).toBeUndefined();
  });
});
