// The engine's PNG decoder (engine/png.ts) on rows that are not all filter 0, as a real encoder
// writes them (armproof's own writes only filter 0): every filter decodes to the picture it was
// made from, an unknown one is refused.
import { crc32 as zlibCrc32, deflateSync } from 'node:zlib'
import { describe, expect, test } from 'vitest'
import { decodePng } from '../../engine/png.ts'
import { encodeSolidPng } from '../../helpers/steps/probes/png.ts'
import { prng } from '../support/prng.ts'

/** A PNG (8-bit RGB) whose rows carry the given filter bytes, from raw rows the test filters itself. */
function filteredPng(width: number, pixels: Buffer, filters: number[]): Buffer {
  const stride = width * 3
  const rows: Buffer[] = []
  for (let y = 0; y < filters.length; y++) {
    const row = pixels.subarray(y * stride, (y + 1) * stride)
    const prev = y > 0 ? pixels.subarray((y - 1) * stride, y * stride) : Buffer.alloc(stride)
    const out = Buffer.alloc(stride + 1)
    out[0] = filters[y]!
    for (let i = 0; i < stride; i++) {
      const a = i >= 3 ? row[i - 3]! : 0
      const b = prev[i]!
      const c = i >= 3 ? prev[i - 3]! : 0
      const p = a + b - c
      const paeth =
        Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c) ? a : Math.abs(p - b) <= Math.abs(p - c) ? b : c
      const predicted = [0, a, b, (a + b) >> 1, paeth][filters[y]!] ?? 0
      out[i + 1] = (row[i]! - predicted) & 0xff
    }
    rows.push(out)
  }
  // The chunks as helpers/steps/probes/png.ts writes them, around the filtered rows.
  const solid = encodeSolidPng(width, filters.length, [0, 0, 0])
  const idatAt = solid.indexOf('IDAT') - 4
  const idat = deflateSync(Buffer.concat(rows))
  const head = Buffer.alloc(8)
  head.writeUInt32BE(idat.length, 0)
  head.write('IDAT', 4, 'latin1')
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(zlibCrc32(Buffer.concat([head.subarray(4), idat])) >>> 0, 0)
  return Buffer.concat([solid.subarray(0, idatAt), head, idat, crc, solid.subarray(solid.indexOf('IEND') - 4)])
}

describe('the engine PNG decoder', () => {
  test('every row filter (none, sub, up, average, paeth) decodes to the picture (seeded)', () => {
    const width = 9
    const filters = [0, 1, 2, 3, 4, 4, 3, 2, 1, 0, 2, 4]
    const random = prng(7)
    const pixels = Buffer.from(Array.from({ length: width * 3 * filters.length }, () => Math.floor(random() * 256)))
    const png = decodePng(filteredPng(width, pixels, filters))
    expect([png.width, png.height]).toEqual([width, filters.length])
    for (let y = 0; y < filters.length; y++)
      for (let x = 0; x < width; x++)
        expect(png.at(x, y), `pixel ${x},${y}`).toEqual([...pixels.subarray((y * width + x) * 3, (y * width + x) * 3 + 3)])
  })

  test('an unknown row filter is refused', () => {
    expect(() => decodePng(filteredPng(2, Buffer.alloc(2 * 3 * 2), [0, 5]))).toThrow(/unknown row filter 5 on row 1/)
  })
})
