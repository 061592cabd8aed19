// A real PNG encoder for the vision probe's solid-colour image (8-bit RGB, non-interlaced). What
// reads it back is the engine's: the reference engine has its own decoder (engine/png.ts), which
// the tests use to prove this encoder.
import { crc32, deflateSync } from 'node:zlib'

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
