// The reference engine's PNG decoder: how it "sees" the vision probe's picture. 8-bit RGB or RGBA,
// non-interlaced; the signature and every chunk's CRC are checked. The engine's own, as a real
// engine's image decoding is: armproof's product only encodes (helpers/steps/probes/png.ts).

export type Rgb = readonly [number, number, number]

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

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
    if (process.getBuiltinModule('node:zlib').crc32(buf.subarray(offset + 4, offset + 8 + length)) >>> 0 !== crc)
      throw new PngError(`chunk ${type} has a bad CRC`)
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
  // node:zlib at the first image (the CRC above), not at every engine start.
  const raw = process.getBuiltinModule('node:zlib').inflateSync(Buffer.concat(idat))
  const stride = width * channels
  if (raw.length < (stride + 1) * height) throw new PngError('PNG image data is shorter than its size says')
  const pixels = Buffer.alloc(stride * height)
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1))
    const out = pixels.subarray(y * stride, (y + 1) * stride)
    const prev = y > 0 ? pixels.subarray((y - 1) * stride, y * stride) : undefined
    // Filter 0 (none, what armproof's encoder writes): the row as it is, without the per-byte loop.
    if (filter === 0) {
      out.set(line)
      continue
    }
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? out[i - channels]! : 0
      const b = prev ? prev[i]! : 0
      const c = prev && i >= channels ? prev[i - channels]! : 0
      const x = line[i]!
      switch (filter) {
        case 1:
          out[i] = (x + a) & 0xff
          break
        case 2:
          out[i] = (x + b) & 0xff
          break
        case 3:
          out[i] = (x + ((a + b) >> 1)) & 0xff
          break
        case 4:
          out[i] = (x + paeth(a, b, c)) & 0xff
          break
        default:
          throw new PngError(`unknown row filter ${filter} on row ${y}`)
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
