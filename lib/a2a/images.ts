/**
 * Images as the kernel receives them (issue 13). The reference adapter ran
 * every inline image through its resizer before the kernel saw it: the
 * model's API refuses an image past 5 MiB of base64 and does not need more
 * than 2000 px a side. The same targets here, with sharp (libvips):
 *
 * - An image within {@link MAX_SENT_SIDE} px a side and {@link MAX_SENT_BYTES}
 *   bytes is sent as it came, byte for byte (its metadata too, as the
 *   reference did), under the media type its bytes show.
 * - A larger one is turned upright (its EXIF orientation applied), scaled to
 *   fit 2000 × 2000 keeping its aspect ratio (never enlarged), and encoded
 *   again with no metadata at all (EXIF, GPS, XMP, ICC: pixels in sRGB): a
 *   PNG as PNG when that fits the byte target, anything else (or a PNG that
 *   does not fit) as JPEG at quality 80, 60, 40 then 20, whichever fits
 *   first, transparency flattened onto white; as a last resort 1000 px a
 *   side at quality 20. GIF and WebP keep their first frame only.
 * - What sharp cannot decode, a format other than PNG, JPEG, GIF or WebP
 *   (whatever the declared media type), or an image past
 *   {@link MAX_DECODED_PIXELS} is the client's error: INVALID_INPUT imageUndecodable.
 *
 * Decoding is the costly part and runs off the event loop (sharp works in
 * libuv's thread pool). It is bounded: at most {@link IMAGES_AT_ONCE} images
 * are worked on at once in the whole service, each with one libvips thread,
 * so a burst of large images queues instead of taking every core and every
 * pool thread (file reads share that pool) from the runs already streaming.
 */
import { availableParallelism } from "node:os";
import sharp, { type Sharp } from "sharp";
import { AguiError } from "../errors.js";
import { detailParams } from "../i18n/detail.js";
import type { ValidRunInput } from "../model/run-input.js";
import { latestUserMessage, toUserParts, type A2aImagePart, type A2aUserPart } from "./request-mapping.js";

const MiB = 1024 * 1024;
/** The reference's target: what 5 MiB of base64 decodes to (3.75 MiB, 3,932,160 bytes). */
export const MAX_SENT_BYTES = (5 * MiB * 3) / 4;
/** The reference's longest side, in pixels, for width and height alike. */
export const MAX_SENT_SIDE = 2000;
/** The reference's JPEG qualities, tried in turn until one fits {@link MAX_SENT_BYTES}. */
export const JPEG_QUALITIES = [80, 60, 40, 20] as const;
/** The reference's last resort when quality 20 at 2000 px is still too large. */
export const LAST_RESORT_SIDE = 1000;
/**
 * Pillow, the reference's decoder, calls an image past 89,478,485 pixels a
 * decompression bomb (it warns, and refuses at twice that); an 8 MiB PNG can
 * declare far more pixels than it holds. Refused here at Pillow's warning:
 * camera photographs (up to about 60 MP) pass, a bomb is never decoded.
 */
export const MAX_DECODED_PIXELS = 89_478_485;
/** Half the cores, at least one: room is left for the event loop and the runs' own work. */
export const IMAGES_AT_ONCE = Math.max(1, Math.floor(availableParallelism() / 2));

// One libvips thread per image: the bound above is what decides how many cores images take.
sharp.concurrency(1);

export type SentMediaType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

export interface SentImage {
  bytes: Buffer;
  mediaType: SentMediaType;
  /** The size sent (after the EXIF orientation, for an image resized). */
  width: number;
  height: number;
  /** False when `bytes` are the bytes received. */
  resized: boolean;
}

/** An image the service will not decode, for whatever reason sharp or the checks here gave. */
export class UndecodableImage extends Error {}

/** The format the bytes are, by their signature: libvips is never handed SVG, TIFF, HEIF and the rest. */
function formatOf(bytes: Buffer): SentMediaType | undefined {
  const ascii = (start: number, end: number) => bytes.toString("latin1", start, end);
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from("89504e470d0a1a0a", "hex"))) return "image/png";
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "image/jpeg";
  if (ascii(0, 6) === "GIF87a" || ascii(0, 6) === "GIF89a") return "image/gif";
  if (bytes.length >= 12 && ascii(0, 4) === "RIFF" && ascii(8, 12) === "WEBP") return "image/webp";
  return undefined;
}

const decoding = (bytes: Buffer): Sharp =>
  // failOn "warning": a truncated or damaged image is refused, as the reference's strict Pillow refused it.
  sharp(bytes, { limitInputPixels: MAX_DECODED_PIXELS, failOn: "warning", autoOrient: true });

/** At most `slots` tasks at once; the rest wait in arrival order. */
class WorkQueue {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly slots: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.slots) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running += 1;
    try {
      return await task();
    } finally {
      // The slot passes straight to the next waiter, so no newcomer slips in between.
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}

const imageWork = new WorkQueue(IMAGES_AT_ONCE);

async function encodeWithin(pixels: Sharp, source: SentMediaType): Promise<{ bytes: Buffer; mediaType: SentMediaType }> {
  // Scaled once to raw pixels; each encoding below starts from them instead of decoding the original again.
  const scaled = await pixels
    .resize({ width: MAX_SENT_SIDE, height: MAX_SENT_SIDE, fit: "inside", withoutEnlargement: true })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const raw = { raw: { width: scaled.info.width, height: scaled.info.height, channels: scaled.info.channels } };
  if (source === "image/png") {
    const png = await sharp(scaled.data, raw).png({ compressionLevel: 9 }).toBuffer();
    if (png.length <= MAX_SENT_BYTES) return { bytes: png, mediaType: "image/png" };
  }
  const opaque = () => sharp(scaled.data, raw).flatten({ background: "#ffffff" });
  for (const quality of JPEG_QUALITIES) {
    const jpeg = await opaque().jpeg({ quality }).toBuffer();
    if (jpeg.length <= MAX_SENT_BYTES) return { bytes: jpeg, mediaType: "image/jpeg" };
  }
  const smallest = await opaque()
    .resize({ width: LAST_RESORT_SIDE, height: LAST_RESORT_SIDE, fit: "inside", withoutEnlargement: true })
    .jpeg({ quality: JPEG_QUALITIES[JPEG_QUALITIES.length - 1] })
    .toBuffer();
  if (smallest.length > MAX_SENT_BYTES) throw new UndecodableImage(`no encoding within ${MAX_SENT_BYTES} bytes`);
  return { bytes: smallest, mediaType: "image/jpeg" };
}

async function prepare(bytes: Buffer): Promise<SentImage> {
  const format = formatOf(bytes);
  if (!format) throw new UndecodableImage("not a PNG, JPEG, GIF or WebP image");
  // From the header alone; sharp refuses here an image past MAX_DECODED_PIXELS, before a pixel is decoded.
  const { width, height } = (await decoding(bytes).metadata()).autoOrient;
  if (bytes.length <= MAX_SENT_BYTES && width <= MAX_SENT_SIDE && height <= MAX_SENT_SIDE) {
    // Sent as it came, but decoded all the same: an image the kernel could not read is refused here, as the reference did.
    await decoding(bytes).resize({ width: 64, height: 64, fit: "inside", withoutEnlargement: true }).raw().toBuffer();
    return { bytes, mediaType: format, width, height, resized: false };
  }
  const encoded = await encodeWithin(decoding(bytes), format);
  const sent = await sharp(encoded.bytes).metadata();
  return { ...encoded, width: sent.width, height: sent.height, resized: true };
}

/**
 * One image as it is sent to the kernel (see the top of this file), or an
 * `UndecodableImage`. Queued behind the images already being worked on.
 */
export async function sentImage(bytes: Buffer): Promise<SentImage> {
  return imageWork.run(async () => {
    try {
      return await prepare(bytes);
    } catch (error) {
      throw error instanceof UndecodableImage ? error : new UndecodableImage(error instanceof Error ? error.message : String(error));
    }
  });
}

const isImagePart = (part: A2aUserPart): part is A2aImagePart => "data" in part;

/**
 * The latest user message as the kernel receives it: its parts, each image
 * made sendable (see `sentImage`), one image after another. An image that
 * cannot be is an `INVALID_INPUT` (reason `imageUndecodable`) at the part's place.
 * Undefined when the input carries no user message.
 */
export async function userPartsForKernel(input: ValidRunInput): Promise<A2aUserPart[] | undefined> {
  const message = latestUserMessage(input);
  if (!message) return undefined;
  const messageIndex = input.messages.lastIndexOf(message);
  // toUserParts keeps the content's order, one part for one part: index i is the content's part i.
  const parts = toUserParts(message);
  const sent: A2aUserPart[] = [];
  for (const [index, part] of parts.entries()) {
    if (!isImagePart(part)) {
      sent.push(part);
      continue;
    }
    let image: SentImage;
    try {
      image = await sentImage(Buffer.from(part.data.bytes, "base64"));
    } catch (error) {
      if (!(error instanceof UndecodableImage)) throw error;
      throw new AguiError("INVALID_INPUT", {
        reason: "imageUndecodable",
        ...detailParams(`/messages/${messageIndex}/content/${index}/source/value`, "invalid"),
      });
    }
    sent.push(
      image.resized || image.mediaType !== part.mediaType
        ? {
            data: { filename: part.data.filename, bytes: image.resized ? image.bytes.toString("base64") : part.data.bytes },
            mediaType: image.mediaType,
          }
        : part,
    );
  }
  return sent;
}
