// The fleet report written in pieces (helpers/fleet/report.ts fleetReportJson) is, byte for byte,
// what `JSON.stringify(report, null, 2)` and a newline make of it: the same file, never one string
// of some 17 MB for 1,000 targets.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { fleetReportJson, type FleetReport } from '../../helpers/fleet/report.ts'
import { writeAtomicSync } from '../../helpers/seams/atomic.ts'
import { pick, prng } from '../support/prng.ts'

const WORDS = ['green', 'a "quoted" word', 'two\nlines', 'tab\there', 'ünïcode ✓', '', '\\', '  "targets": []', '\u2028']

function randomValue(random: () => number, depth: number): unknown {
  const r = random()
  if (depth > 3 || r < 0.3) return pick(random, WORDS)
  if (r < 0.4) return Math.floor(random() * 1e6) / 7
  if (r < 0.45) return null
  if (r < 0.5) return undefined
  if (r < 0.75) return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(random, depth + 1))
  return Object.fromEntries(
    Array.from({ length: Math.floor(random() * 4) }, (_, i) => [`${pick(random, WORDS)}${i}`, randomValue(random, depth + 1)]),
  )
}

function randomFleet(random: () => number, targets: number): FleetReport {
  return {
    format: 'armproof-fleet/1',
    verdict: 'green',
    exitCode: 0,
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:00:01.000Z',
    fleet: { file: pick(random, WORDS), total: targets, shards: null, concurrency: null, admission: { given: 'auto', peak: null } },
    targets: Array.from({ length: targets }, (_, i) => ({
      name: `t${i}${pick(random, WORDS)}`,
      index: random() < 0.5 ? i : undefined,
      report: randomValue(random, 0) as never,
    })),
    tool: { name: 'armproof', version: '0.0.0' },
  } as unknown as FleetReport
}

describe('the fleet report in pieces', () => {
  test('is JSON.stringify(report, null, 2) and a newline, for random reports of 0 to 20 targets', () => {
    const random = prng(25)
    for (let k = 0; k < 300; k++) {
      const report = randomFleet(random, Math.floor(random() * 21))
      expect([...fleetReportJson(report)].join('')).toBe(`${JSON.stringify(report, null, 2)}\n`)
    }
  })

  test('writes the same file through writeAtomicSync as the whole string does', () => {
    const dir = mkdtempSync(join(tmpdir(), 'armproof-fleet-json-'))
    try {
      const report = randomFleet(prng(7), 50)
      writeAtomicSync(join(dir, 'pieces.json'), fleetReportJson(report))
      writeAtomicSync(join(dir, 'whole.json'), `${JSON.stringify(report, null, 2)}\n`)
      expect(readFileSync(join(dir, 'pieces.json'), 'utf8')).toBe(readFileSync(join(dir, 'whole.json'), 'utf8'))
      expect(JSON.parse(readFileSync(join(dir, 'pieces.json'), 'utf8'))).toEqual(JSON.parse(JSON.stringify(report)))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
