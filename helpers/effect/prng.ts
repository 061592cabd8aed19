// One seeded pseudo-random source (mulberry32): the effect's bootstrap draws from it, so the same
// answers from Prometheus give the same confidence intervals (a replay reaches the same verdict),
// and the property tests use it so that every case can be run again from its seed.

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

/** A 32-bit seed from a text (FNV-1a): one metric's bootstrap never shares its draws with another's. */
export function seedOf(text: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0
  return h
}
