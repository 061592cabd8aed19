// Is a page the pid's? Its process_start_time_seconds is read against the pid's start time to the
// pid's own resolution (1/CLK_TCK), whatever digits the page prints: exporters print the shortest
// form that reads back, so a start on a whole second prints as `1.764597643e+09`.
import { describe, expect, test } from 'vitest'
import { goFloat } from '../../../engine/metrics.ts'
import { sameStart } from '../../../helpers/steps/meter/bind.ts'
import { prng } from '../../support/prng.ts'

const TICK = 0.01

describe('a page bound to the pid by its start time', () => {
  test('another engine started on a whole second is not the pid started 0.37 s later (it once passed as ±0.5 s: a false green)', () => {
    const printed = goFloat(1764597643)
    expect(printed).toBe('1.764597643e+09')
    expect(sameStart(Number(printed), 1764597643.37, TICK)).toBe(false)
    expect(sameStart(Number(printed), 1764597643, TICK)).toBe(true)
    // One tick apart is another process; the same value printed and read back is this one.
    expect(sameStart(Number(goFloat(1764597643.3)), 1764597643.31, TICK)).toBe(false)
    expect(sameStart(Number(goFloat(1764597643.3)), 1764597643.3, TICK)).toBe(true)
  })

  test('over random start times (seeded): the same start printed as Go does matches, any other tick never does', () => {
    const random = prng(20261201)
    for (let i = 0; i < 2000; i++) {
      const btime = 1_764_000_000 + Math.floor(random() * 1_000_000)
      const ticks = Math.floor(random() * 100_000_000)
      // As prometheus_client and armproof compute it: btime + ticks / CLK_TCK.
      const pid = btime + ticks / 100
      expect(sameStart(Number(goFloat(pid)), pid, TICK), goFloat(pid)).toBe(true)
      // Another process: 1 to 99 ticks away (within one second, where a printed whole second once matched).
      const other = btime + (ticks + 1 + Math.floor(random() * 99) * (random() < 0.5 ? -1 : 1)) / 100
      if (other === pid) continue
      expect(sameStart(Number(goFloat(other)), pid, TICK), `${goFloat(other)} vs ${pid}`).toBe(false)
    }
  })
})
