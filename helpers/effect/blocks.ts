// The blocks (chunks) of a window laid out for the thousands of sums a bootstrap or permutation
// test draws from them: one Float64Array, block after block, `width` counts each, and the span of
// buckets any block holds anything in. A sum adds the chosen blocks bucket by bucket in the order
// they were chosen, exactly as a sum over arrays of arrays does (so the same draw gives the same
// bits); the buckets outside the span are zero in every block, so a sum leaves them at zero
// without adding them (adding 0 changes no sum).

export interface BlockLayout {
  /** Block i's count of bucket k at i·width + k (a block shorter than `width` padded with zeros). */
  flat: Float64Array
  width: number
  /** Every block holds zero outside the buckets [from, to). */
  from: number
  to: number
  /** Scratch: where each chosen block starts in `flat` (grown as a sum needs). */
  starts: Int32Array
}

export function layout(blocks: readonly (readonly number[])[], width: number): BlockLayout {
  const flat = new Float64Array(blocks.length * width)
  let from = width
  let to = 0
  blocks.forEach((block, i) => {
    for (let k = 0; k < width; k++) {
      const c = block[k] ?? 0
      flat[i * width + k] = c
      // (−0 is zero here too: a sum starts at +0, and +0 + −0 is +0)
      if (c !== 0) {
        if (k < from) from = k
        if (k >= to) to = k + 1
      }
    }
  })
  return { flat, width, from: Math.min(from, to), to, starts: new Int32Array(blocks.length) }
}

/**
 * The counts of the chosen blocks (`chosen[i] + offset` in `l`, i < `count`), summed bucket by
 * bucket into `out` (width long; the buckets outside the span set to 0).
 */
export function sumInto(l: BlockLayout, chosen: ArrayLike<number>, count: number, offset: number, out: Float64Array): Float64Array {
  const { flat, width, from, to } = l
  if (l.starts.length < count) l.starts = new Int32Array(count)
  const starts = l.starts
  for (let i = 0; i < count; i++) starts[i] = (chosen[i]! + offset) * width
  for (let k = 0; k < from; k++) out[k] = 0
  // bucket by bucket, each sum in a register: the same additions in the same order as block by block
  for (let k = from; k < to; k++) {
    let sum = 0
    for (let i = 0; i < count; i++) sum += flat[starts[i]! + k]!
    out[k] = sum
  }
  for (let k = to; k < width; k++) out[k] = 0
  return out
}

/** Counts of the chosen blocks, summed bucket by bucket. */
export function sumBlocks(blocks: readonly (readonly number[])[], chosen: readonly number[], width: number): number[] {
  return Array.from(sumInto(layout(blocks, width), chosen, chosen.length, 0, new Float64Array(width)))
}
