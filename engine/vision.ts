// What the "model" sees in image_url parts: vLLM's validation (object with a url, base64 data
// URLs only, a decodable image) and the nearest palette colour of the centre pixel.
import { decodePng } from './png.ts'
import type { Rgb } from './png.ts'
import { BadRequest } from './errors.ts'

export const PALETTE = [
  ['red', [255, 0, 0]],
  ['green', [0, 160, 0]],
  ['blue', [0, 0, 255]],
  ['yellow', [255, 255, 0]],
  ['orange', [255, 140, 0]],
  ['purple', [128, 0, 128]],
  ['black', [0, 0, 0]],
  ['white', [255, 255, 255]],
] as const satisfies readonly (readonly [string, Rgb])[]

export type ColourName = (typeof PALETTE)[number][0]

export function nearestColour(rgb: Rgb): ColourName {
  let best: ColourName = 'black'
  let bestDistance = Infinity
  for (const [name, [r, g, b]] of PALETTE) {
    const d = (rgb[0] - r) ** 2 + (rgb[1] - g) ** 2 + (rgb[2] - b) ** 2
    if (d < bestDistance) {
      best = name
      bestDistance = d
    }
  }
  return best
}

/** Another palette colour than `name` (for `vision_wrong_colour`). */
export function otherColour(name: ColourName): ColourName {
  const i = PALETTE.findIndex(([n]) => n === name)
  return PALETTE[(i + 1) % PALETTE.length]![0]
}

/** The first palette colour named in a text, by position. */
export function colourInText(text: string): ColourName | null {
  let found: { name: ColourName; at: number } | null = null
  for (const [name] of PALETTE) {
    const at = text.search(new RegExp(`\\b${name}\\b`, 'i'))
    if (at !== -1 && (found === null || at < found.at)) found = { name, at }
  }
  return found?.name ?? null
}

function loadImage(url: unknown): ColourName {
  if (typeof url !== 'string') throw new BadRequest('image_url.url: Input should be a valid string')
  if (!url.startsWith('data:')) {
    throw new BadRequest(`Failed to load image from ${url.slice(0, 64)}: the reference engine only accepts data URLs`)
  }
  const comma = url.indexOf(',')
  const header = comma === -1 ? url : url.slice(0, comma)
  if (comma === -1 || !header.split(';').includes('base64')) {
    throw new BadRequest('Only base64 data URLs are supported for now.')
  }
  const data = url.slice(comma + 1)
  if (!/^[A-Za-z0-9+/=\s]*$/.test(data)) throw new BadRequest('Failed to load image: invalid base64 data')
  try {
    const png = decodePng(Buffer.from(data, 'base64'))
    return nearestColour(png.at(Math.floor(png.width / 2), Math.floor(png.height / 2)))
  } catch (error) {
    throw new BadRequest(`Failed to load image: cannot identify image file (${(error as Error).message})`)
  }
}

/** Whether any message carries an `image_url` part (what a text-only model refuses before reading it). */
export function hasImagePart(messages: readonly unknown[]): boolean {
  return messages.some(
    (m) =>
      Array.isArray((m as { content?: unknown }).content) &&
      (m as { content: unknown[] }).content.some(
        (p) => typeof p === 'object' && p !== null && (p as { type?: unknown }).type === 'image_url',
      ),
  )
}

/**
 * Validates every image_url part of every message (vLLM loads them all) and returns the colour
 * of the last image in `lastUser`, or null when that message carries no image.
 */
export function scanImages(messages: readonly unknown[], lastUser: unknown): ColourName | null {
  let colour: ColourName | null = null
  for (const message of messages) {
    const content = (message as { content?: unknown }).content
    if (!Array.isArray(content)) continue
    for (const part of content as unknown[]) {
      if (typeof part !== 'object' || part === null || (part as { type?: unknown }).type !== 'image_url') continue
      const imageUrl = (part as { image_url?: unknown }).image_url
      if (typeof imageUrl !== 'object' || imageUrl === null) {
        throw new BadRequest('image_url: Input should be a valid dictionary or object to extract fields from')
      }
      const seen = loadImage((imageUrl as { url?: unknown }).url)
      if (message === lastUser) colour = seen
    }
  }
  return colour
}
