// A real PNG encoder for solid-colour probe images, and the small decoder that proves it
// (and lets the reference engine see the picture). 8-bit RGB/RGBA, non-interlaced only.
import { crc32, deflateSync, inflateSync } from 'node:zlib'

export type Rgb = readonly [number, number, number]

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(data.length, 0)
  head.write(type, 4, 'latin1')
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0)
  return Buffer.concat([head, data, crc])
}

/** Encodes a width×height image filled with one colour (colour type 2, filter 0 per row). */
export function encodeSolidPng(width: number, height: number, rgb: Rgb): Buffer {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1 || width * height > 16_777_216) {
    throw new RangeError(`PNG size must be 1..4096² whole pixels, got ${width}×${height}`)
  }
  for (const c of rgb) if (!Number.isInteger(c) || c < 0 || c > 255) throw new RangeError(`colour channel out of range: ${c}`)
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr[8] = 8 // bit depth
  ihdr[9] = 2 // colour type: truecolour
  ihdr[10] = 0 // compression
  ihdr[11] = 0 // filter method
  ihdr[12] = 0 // no interlace
  const row = Buffer.alloc(1 + width * 3)
  for (let x = 0; x < width; x++) row.set(rgb, 1 + x * 3)
  const raw = Buffer.alloc(row.length * height)
  for (let y = 0; y < height; y++) row.copy(raw, y * row.length)
  return Buffer.concat([SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))])
}

export interface DecodedPng {
  width: number
  height: number
  /** RGB of one pixel. */
  at(x: number, y: number): Rgb
}

export class PngError extends Error {
  readonly code = 'ARMPROOF_PNG_INVALID'
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c
  const pa = Math.abs(p - a)
  const pb = Math.abs(p - b)
  const pc = Math.abs(p - c)
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c
}

/** Decodes an 8-bit RGB or RGBA, non-interlaced PNG; checks signature and every chunk CRC. */
export function decodePng(bytes: Uint8Array): DecodedPng {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (buf.length < 8 || !buf.subarray(0, 8).equals(SIGNATURE)) throw new PngError('not a PNG: bad signature')
  let offset = 8
  let width = 0
  let height = 0
  let channels = 0
  const idat: Buffer[] = []
  while (offset + 12 <= buf.length) {
    const length = buf.readUInt32BE(offset)
    const type = buf.toString('latin1', offset + 4, offset + 8)
    const end = offset + 12 + length
    if (end > buf.length) throw new PngError(`chunk ${type} runs past the end of the file`)
    const body = buf.subarray(offset + 8, offset + 8 + length)
    const crc = buf.readUInt32BE(offset + 8 + length)
    if ((crc32(buf.subarray(offset + 4, offset + 8 + length)) >>> 0) !== crc) throw new PngError(`chunk ${type} has a bad CRC`)
    if (type === 'IHDR') {
      width = body.readUInt32BE(0)
      height = body.readUInt32BE(4)
      const [depth, colourType, , , interlace] = [body[8], body[9], body[10], body[11], body[12]]
      if (depth !== 8 || (colourType !== 2 && colourType !== 6) || interlace !== 0) {
        throw new PngError(`unsupported PNG: depth ${depth}, colour type ${colourType}, interlace ${interlace}`)
      }
      channels = colourType === 2 ? 3 : 4
    } else if (type === 'IDAT') {
      idat.push(body)
    } else if (type === 'IEND') {
      break
    }
    offset = end
  }
  if (!width || !height || !channels) throw new PngError('PNG has no IHDR')
  const raw = inflateSync(Buffer.concat(idat))
  const stride = width * channels
  if (raw.length < (stride + 1) * height) throw new PngError('PNG image data is shorter than its size says')
  const pixels = Buffer.alloc(stride * height)
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1))
    const out = pixels.subarray(y * stride, (y + 1) * stride)
    const prev = y > 0 ? pixels.subarray((y - 1) * stride, y * stride) : undefined
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? out[i - channels]! : 0
      const b = prev ? prev[i]! : 0
      const c = prev && i >= channels ? prev[i - channels]! : 0
      const x = line[i]!
      switch (filter) {
        case 0: out[i] = x; break
        case 1: out[i] = (x + a) & 0xff; break
        case 2: out[i] = (x + b) & 0xff; break
        case 3: out[i] = (x + ((a + b) >> 1)) & 0xff; break
        case 4: out[i] = (x + paeth(a, b, c)) & 0xff; break
        default: throw new PngError(`unknown row filter ${filter} on row ${y}`)
      }
    }
  }
  return {
    width,
    height,
    at(x, y) {
      const i = (y * width + x) * channels
      return [pixels[i]!, pixels[i + 1]!, pixels[i + 2]!]
    },
  }
}
