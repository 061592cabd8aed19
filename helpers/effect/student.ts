// Student's t distribution, for the judgement's intervals and p-values over a handful of hours:
// its two-sided tail from the regularized incomplete beta function (Lentz's continued fraction, as
// in Numerical Recipes' betacf), its quantile by bisection on that tail. Six hours a window give
// five degrees of freedom, where the normal's 1.96 would be far too narrow (t is 2.57 there).

/** ln Γ(x) for x > 0 (Lanczos, g = 7, nine terms: relative error below 1e-14). */
export function logGamma(x: number): number {
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905,
    -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ]
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x)
  const z = x - 1
  let a = c[0]!
  const t = z + 7.5
  for (let i = 1; i < 9; i++) a += c[i]! / (z + i)
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a)
}

/** The continued fraction of the incomplete beta function (modified Lentz). */
function betaFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300
  let c = 1
  let d = 1 - ((a + b) * x) / (a + 1)
  if (Math.abs(d) < tiny) d = tiny
  d = 1 / d
  let h = d
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2))
    d = 1 + aa * d
    if (Math.abs(d) < tiny) d = tiny
    c = 1 + aa / c
    if (Math.abs(c) < tiny) c = tiny
    d = 1 / d
    h *= d * c
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1))
    d = 1 + aa * d
    if (Math.abs(d) < tiny) d = tiny
    c = 1 + aa / c
    if (Math.abs(c) < tiny) c = tiny
    d = 1 / d
    const step = d * c
    h *= step
    if (Math.abs(step - 1) < 1e-15) break
  }
  return h
}

/** The regularized incomplete beta function I_x(a, b). */
export function betaRegularized(x: number, a: number, b: number): number {
  if (x <= 0) return 0
  if (x >= 1) return 1
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x))
  return x < (a + 1) / (a + b + 2) ? (front * betaFraction(a, b, x)) / a : 1 - (front * betaFraction(b, a, 1 - x)) / b
}

/** P(|T| ≥ |t|) for Student's t with `df` degrees of freedom (df > 0). */
export function tTwoSided(t: number, df: number): number {
  if (!Number.isFinite(t)) return Number.isNaN(t) ? NaN : 0
  return betaRegularized(df / (df + t * t), df / 2, 0.5)
}

/** The t with P(T ≤ t) = p, for 0 < p < 1 (bisection on the tail to 1e-12). */
export function tQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1)) return p <= 0 ? -Infinity : Infinity
  if (p === 0.5) return 0
  const upper = p > 0.5
  // the two-sided tail at |t| is 2·(1 − p) for the upper quantile
  const target = 2 * (upper ? 1 - p : p)
  let lo = 0
  let hi = 1
  while (tTwoSided(hi, df) > target) hi *= 2
  for (let i = 0; i < 200 && hi - lo > 1e-12 * Math.max(1, hi); i++) {
    const mid = (lo + hi) / 2
    if (tTwoSided(mid, df) > target) lo = mid
    else hi = mid
  }
  const t = (lo + hi) / 2
  return upper ? t : -t
}
