// The judge's answers held to their numbers: every shift, interval, p, degrees of freedom and
// detectable shift of the judgements in pinned.cases.ts, exactly (to the last bit). The same input
// must give the same judgement: a replay reaches the recorded verdict. A change here is a change
// of verdicts: say why in the commit that rewrites pinned.json.
import { readFileSync } from 'node:fs'
import { describe, expect, test } from 'vitest'
import type { Judgement } from '../../helpers/effect/judge.ts'
import { PINNED } from './pinned.cases.ts'

const EXPECTED = JSON.parse(readFileSync(new URL('./pinned.json', import.meta.url), 'utf8')) as Record<string, Judgement>

describe('the judge gives the same answer for the same input and seed, number for number', () => {
  test('every case is pinned, and every pinned answer has its case', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual(Object.keys(PINNED).sort())
  })

  for (const [name, judge] of Object.entries(PINNED)) {
    test(name, () => {
      const first = judge()
      // twice in one process: nothing a judgement leaves behind (a reused buffer) changes the next
      expect(judge()).toEqual(first)
      expect(JSON.parse(JSON.stringify(first))).toEqual(EXPECTED[name])
    })
  }
})
