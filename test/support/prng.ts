// The property tests' seeded pseudo-random source (mulberry32): every case can be run again from
// its seed, and a failing seed is named in the test's message; seedOf makes a seed of a text.

/** A generator of numbers in [0, 1) from a 32-bit seed. */
export function prng(seed: number): () => number {
  // The state in a Uint32Array, not a `let`: a 32-bit unsigned value does not fit V8's small
  // integers, so a captured variable would hold a new heap number after every draw.
  const state = new Uint32Array([seed >>> 0])
  return () => {
    state[0] = state[0]! + 0x6d2b79f5
    let t = state[0]!
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** A 32-bit seed from a text (FNV-1a): one metric's bootstrap never shares its draws with another's. */
export function seedOf(text: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0
  return h
}

/** One element of `xs`, chosen by `random`. */
export function pick<T>(random: () => number, xs: readonly T[]): T {
  return xs[Math.floor(random() * xs.length)]!
}
