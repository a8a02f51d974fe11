/**
 * Just enough PNG decoding to check a Chromium screenshot: 8-bit RGB or RGBA,
 * not interlaced, which is what Chromium writes. Anything else throws, so a
 * change of format shows up as a failure instead of as garbage pixels.
 */
import { inflateSync } from "node:zlib";

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export interface Png {
  width: number;
  height: number;
  pixel(x: number, y: number): [number, number, number];
  /** How many distinct RGB colours, and the share of the commonest: a blank or one-colour image has few and one. */
  colourStats(): { distinct: number; commonestShare: number };
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

export function readPng(data: Buffer): Png {
  if (!data.subarray(0, 8).equals(SIGNATURE)) throw new Error("not a PNG: bad signature");
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  for (let offset = 8; offset < data.length;) {
    const length = data.readUInt32BE(offset);
    const type = data.toString("latin1", offset + 4, offset + 8);
    const body = data.subarray(offset + 8, offset + 8 + length);
    if (type === "IHDR") {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      const [bitDepth, colourType, , , interlace] = body.subarray(8, 13);
      if (bitDepth !== 8 || (colourType !== 2 && colourType !== 6) || interlace !== 0) {
        throw new Error(`unsupported PNG: bit depth ${bitDepth}, colour type ${colourType}, interlace ${interlace}`);
      }
      channels = colourType === 6 ? 4 : 3;
    } else if (type === "IDAT") {
      idat.push(body);
    } else if (type === "IEND") {
      break;
    }
    offset += 12 + length;
  }
  if (!channels) throw new Error("not a PNG: no IHDR");

  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  if (raw.length !== height * (stride + 1)) throw new Error(`PNG data is ${raw.length} bytes, expected ${height * (stride + 1)}`);
  const pixels = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const out = y * stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? pixels[out + x - channels]! : 0;
      const b = y > 0 ? pixels[out - stride + x]! : 0;
      const c = x >= channels && y > 0 ? pixels[out - stride + x - channels]! : 0;
      const predictor = [0, a, b, (a + b) >> 1, paeth(a, b, c)][filter];
      if (predictor === undefined) throw new Error(`PNG row ${y} has unknown filter ${filter}`);
      pixels[out + x] = (line[x]! + predictor) & 0xff;
    }
  }

  return {
    width,
    height,
    pixel(x, y) {
      const at = y * stride + x * channels;
      return [pixels[at]!, pixels[at + 1]!, pixels[at + 2]!];
    },
    colourStats() {
      const counts = new Map<number, number>();
      for (let at = 0; at < pixels.length; at += channels) {
        const key = (pixels[at]! << 16) | (pixels[at + 1]! << 8) | pixels[at + 2]!;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      return { distinct: counts.size, commonestShare: Math.max(...counts.values()) / (width * height) };
    },
  };
}
