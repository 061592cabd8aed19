// One seeded pseudo-random source for the property tests (mulberry32): every case can be run again
// from its seed, and a failing seed is named in the test's message.

/** A generator of numbers in [0, 1) from a 32-bit seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** One element of `xs`, chosen by `random`. */
export function pick<T>(random: () => number, xs: readonly T[]): T {
  return xs[Math.floor(random() * xs.length)]!
}
