// The property tests' seeded pseudo-random source (the product's own, helpers/effect/prng.ts): every
// case can be run again from its seed, and a failing seed is named in the test's message.

export { prng } from '../../helpers/effect/prng.ts'

/** One element of `xs`, chosen by `random`. */
export function pick<T>(random: () => number, xs: readonly T[]): T {
  return xs[Math.floor(random() * xs.length)]!
}
