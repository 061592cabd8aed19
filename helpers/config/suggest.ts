// "Did you mean …?" for a mistyped knob or flag: the same word in another case, or the nearest
// known word within a few edits. Pure; no suggestion is better than a wrong one.

/** Edit distance (insert, delete, substitute, swap of two neighbours). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  )
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1)
    }
  }
  return d[a.length]![b.length]!
}

/** The known word the operator most likely meant, or undefined when none is close. */
export function closest(word: string, known: readonly string[]): string | undefined {
  const folded = (s: string) => s.toLowerCase().replaceAll('_', '-')
  const same = known.find((k) => folded(k) === folded(word))
  if (same !== undefined) return same
  const limit = Math.max(1, Math.min(3, Math.floor(word.length / 4)))
  let best: { word: string; distance: number } | undefined
  for (const k of known) {
    const distance = editDistance(folded(word), folded(k))
    if (distance <= limit && (!best || distance < best.distance)) best = { word: k, distance }
  }
  return best?.word
}

/** `; did you mean X?`, or '' when nothing is close. */
export function didYouMean(word: string, known: readonly string[], show: (k: string) => string = (k) => k): string {
  const k = closest(word, known)
  return k === undefined ? '' : `; did you mean ${show(k)}?`
}
