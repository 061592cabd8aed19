// merge-reports believes no shard: a property test over random shard sets (foreign, forged,
// missing, repeated, unknown verdict words) that the merged verdict is never greener than the
// worst honest re-derivation of the run's targets, and that a refused merge writes nothing. The
// one-line refusals of each case are rows of docs/writeback-faults.md (test/support/writeback-faults.ts).
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { mergeFleetReports, mergeReports } from '../../helpers/fleet/merge.ts'
import { worstVerdict, type FleetReport } from '../../helpers/fleet/report.ts'
import { EXIT_CODES, type RunVerdict } from '../../helpers/steps/verdict.ts'
import { pick, prng } from '../support/prng.ts'
import { TARGETS_FILE, fleetTargets, randomSteps, shardReports } from '../support/shards.ts'

const dir = mkdtempSync(join(tmpdir(), 'armproof-merge-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

type Doc = Record<string, unknown> & { targets: Array<{ report: Record<string, unknown> & { run: { target: Record<string, unknown> } } }> }
const clone = (r: FleetReport): Doc => structuredClone(r) as unknown as Doc
const WORDS = ['green', 'red', 'inconclusive', 'error', 'interrupted', 'RED', 'Green', 'passed', '', null, undefined] as const

/** One random shard set from an honest run, and the worst verdict its targets' steps honestly give. */
function scenario(seed: number): { inputs: Array<{ path: string; data: unknown }>; honest: RunVerdict | null; mutations: string[] } {
  const random = prng(seed)
  const n = 2 + Math.floor(random() * 6)
  const count = 1 + Math.floor(random() * Math.min(n, 4))
  // A fleet at one failure rate: from all green to mostly red, so a forged word can flip the worst.
  const rate = pick(random, [0, 0.03, 0.1, 0.3])
  const steps = Array.from({ length: n }, () => randomSteps(random, rate))
  const targets = fleetTargets(n, '1')
  const honestShards = shardReports(targets, steps, count)
  const honest = worstVerdict(honestShards.flatMap((s) => s.targets.map((t) => t.report.verdict)))
  let shards: Doc[] = honestShards.map(clone)
  /** Which run each shard is of: this one, or another (a foreign shard; its targets all green). */
  let runs: Array<'this' | 'v0' | 'file'> = shards.map(() => 'this')
  const mutations: string[] = []
  const forgedGreen = new Set<Doc>()
  const forgedSteps = new Set<Doc>()
  for (let m = Math.floor(random() * 3); m > 0 && shards.length > 0; m--) {
    const kind = pick(random, [
      'foreign',
      'foreign-file',
      'verdict-word',
      'forged-green',
      'forged-green',
      'no-verdict',
      'forged-steps',
      'forged-identity',
      'missing',
      'repeated',
    ] as const)
    const s = Math.floor(random() * shards.length)
    const shard = shards[s]!
    const t = shard.targets.length ? shard.targets[Math.floor(random() * shard.targets.length)]! : undefined
    mutations.push(kind)
    // A shard of another run (another --value, or an edited targets file) whose targets all went green.
    const green = steps.map(() => randomSteps(random, 0))
    if (kind === 'foreign') [shards[s], runs[s]] = [clone(shardReports(fleetTargets(n, '0'), green, count)[s % count]!), 'v0']
    else if (kind === 'foreign-file')
      [shards[s], runs[s]] = [clone(shardReports(targets, green, count, `${TARGETS_FILE}# edited\n`)[s % count]!), 'file']
    else if (kind === 'verdict-word' && t) {
      // Most often the dangerous word: green.
      const word = random() < 0.5 ? 'green' : pick(random, WORDS)
      t.report.verdict = word
      // A careful forger makes the exit code fit the word too.
      if (random() < 0.5 && typeof word === 'string' && Object.hasOwn(EXIT_CODES, word)) {
        t.report.exitCode = EXIT_CODES[word as RunVerdict]
        shard.verdict = worstVerdict(shard.targets.map((x) => x.report.verdict as RunVerdict))
      }
    } else if ((kind === 'forged-green' && forgedSteps.has(shard)) || (kind === 'forged-steps' && forgedGreen.has(shard))) {
      // A shard whose steps and verdicts are both forged, consistently, is a report as honest-looking as
      // an honest one: no reader can tell them apart without a signature. Each shard is forged one way.
      mutations.pop()
    } else if (kind === 'forged-green') {
      forgedGreen.add(shard)
      // A careful forger: every non-green target of the shard says green with exit 0, and the shard's own verdict follows.
      for (const x of shard.targets) if (x.report.verdict !== 'green') Object.assign(x.report, { verdict: 'green', exitCode: 0 })
      Object.assign(shard, { verdict: 'green', exitCode: 0 })
    } else if (kind === 'no-verdict' && t) delete t.report.verdict
    else if (kind === 'forged-steps' && t) {
      forgedSteps.add(shard)
      ;(t.report.steps as Array<{ verdict: string }>).forEach((x) => {
        if (x.verdict === 'failed') x.verdict = 'passed'
      })
    } else if (kind === 'forged-identity' && t) t.report.run.target.value = '2'
    else if (kind === 'missing') [shards, runs] = [shards.filter((_, k) => k !== s), runs.filter((_, k) => k !== s)]
    else if (kind === 'repeated')
      [shards, runs] = [
        [...shards, structuredClone(shard)],
        [...runs, runs[s]!],
      ]
  }
  // The honest verdict of the set: of this run; of another whole run (all green); none for a mix, which must be refused.
  const of = new Set(runs)
  const baseline = of.size === 1 ? (of.has('this') ? honest : 'green') : null
  return { inputs: shards.map((data, k) => ({ path: `shard-${k + 1}.json`, data })), honest: baseline, mutations }
}

describe('merge-reports of random shard sets', () => {
  test('is never greener than the worst honest re-derivation, and merges an honest set to exactly it', () => {
    let merged = 0
    let refused = 0
    for (let seed = 1; seed <= 400; seed++) {
      const { inputs, honest, mutations } = scenario(seed)
      const r = mergeFleetReports(inputs)
      const label = `seed ${seed} (${mutations.join(', ') || 'honest'}): ${'problems' in r ? r.problems.join(' | ') : r.merged.verdict} vs honest ${honest}`
      if ('problems' in r) {
        refused++
        expect(r.problems.length, label).toBeGreaterThan(0)
        for (const p of r.problems) expect(p, label).not.toMatch(/\n/)
        expect(mutations.length, `an honest set was refused: ${label}`).toBeGreaterThan(0)
        continue
      }
      merged++
      expect(honest, `shards of two runs were merged: ${label}`).not.toBeNull()
      // Never greener: the worse of the two is the merged one.
      expect(worstVerdict([r.merged.verdict, honest!]), label).toBe(r.merged.verdict)
      expect(
        r.merged.targets.map((t) => t.index),
        label,
      ).toEqual([...r.merged.targets.keys()])
      if (mutations.length === 0) expect(r.merged.verdict, label).toBe(honest)
    }
    // The generator makes both kinds often: a property over only refusals (or only merges) proves little.
    expect(merged).toBeGreaterThan(80)
    expect(refused).toBeGreaterThan(80)
  })

  test('a refused merge writes nothing: neither --out nor --junit', async () => {
    for (let seed = 1; seed <= 60; seed++) {
      const { inputs } = scenario(seed)
      const case_ = join(dir, `case-${seed}`)
      const paths = inputs.map((input, k) => {
        const p = join(dir, `case-${seed}-shard-${k}.json`)
        writeFileSync(p, JSON.stringify(input.data))
        return p
      })
      let err = ''
      let out = ''
      const code = await mergeReports({
        rawArgs: ['--out', `${case_}.json`, '--junit', `${case_}.xml`, ...paths],
        env: {},
        cwd: dir,
        out: { write: (t: string) => (out += t) },
        err: { write: (t: string) => (err += t) },
      })
      expect([0, 1, 2, 3], `seed ${seed}: ${err}`).toContain(code)
      expect(err + out, `seed ${seed}`).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m)
      expect(existsSync(`${case_}.json`), `seed ${seed}: exit ${code}`).toBe(code !== 2)
      expect(existsSync(`${case_}.xml`), `seed ${seed}: exit ${code}`).toBe(code !== 2)
    }
  })
})
