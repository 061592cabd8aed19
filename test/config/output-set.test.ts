// A run's outputs are one set (helpers/config/output-set.ts): every pair of output options on one
// path is refused before anything is contacted or written, by pnpm verify (one target and a fleet)
// and by merge-reports, whether the two name the path alike or through a symlinked folder; and
// nothing is written inside a fixtures folder being recorded.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { mergeReports } from '../../helpers/fleet/merge.ts'
import { realPathOf } from '../../helpers/config/output-set.ts'
import { writeTargets } from '../support/fleet.ts'
import { fleetTargets, shardReports, stepsWith } from '../support/shards.ts'
import { verifyExactly } from '../support/verify-in-process.ts'
import { DEMO_ARM } from '../support/demo-args.ts'

const dir = mkdtempSync(join(tmpdir(), 'armproof-output-set-'))
mkdirSync(join(dir, 'real'))
symlinkSync(join(dir, 'real'), join(dir, 'link'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

let n = 0
/** Two names of one fresh path: alike, or one through the symlinked folder. */
function onePath(viaLink: boolean): [string, string] {
  const name = `out-${++n}`
  return [join(dir, 'real', name), join(dir, viaLink ? 'link' : 'real', name)]
}

/** Each output option as the command takes it: a flag and its value, or an env twin. */
type Option = { name: string; set(path: string): { args: string[]; env: Record<string, string> } }
const flag = (name: string): Option => ({ name, set: (path) => ({ args: [name, path], env: {} }) })
const envTwin = (name: string): Option => ({ name, set: (path) => ({ args: [], env: { [name]: path } }) })
const pairs = <T>(xs: readonly T[]) => xs.flatMap((a, i) => xs.slice(i + 1).map((b) => [a, b] as const))
const cases = (options: readonly Option[]) =>
  pairs(options).flatMap(([a, b]) =>
    [false, true].map((viaLink) => ({ a, b, viaLink, label: `${a.name} and ${b.name}${viaLink ? ' (through a symlinked folder)' : ''}` })),
  )

const LIVE = [...DEMO_ARM, '--base-url', 'http://127.0.0.1:9', '--mode', 'record']

describe.concurrent('pnpm verify, one target: every pair of outputs on one path is refused before contact', () => {
  const options = [flag('--report'), flag('--junit'), flag('--summary'), envTwin('GITHUB_STEP_SUMMARY'), flag('--fixtures')]
  test.each(cases(options))('$label', async ({ a, b, viaLink }) => {
    const [p, q] = onePath(viaLink)
    const x = a.set(p)
    const y = b.set(q)
    // The fixtures folder of a record run takes the other output's place; --fixtures defaults to fixtures/demo/… otherwise.
    const fixtures = a.name === '--fixtures' || b.name === '--fixtures' ? [] : ['--fixtures', join(dir, `fx-${n}`)]
    const r = await verifyExactly([...LIVE, ...fixtures, ...x.args, ...y.args], { ...x.env, ...y.env })
    expect(r.exitCode, r.output).toBe(2)
    expect(r.output).toMatch(new RegExp(`${a.name} and ${b.name}: (both name|.* are one path once symlinks are resolved)`))
    expect(r.output).toContain('nothing was contacted')
  })
})

describe.concurrent("pnpm verify --targets: every pair of the run's outputs, the targets file and a target's fixtures on one path is refused", () => {
  const file = writeTargets({ knob: 'PREFILL_INTERLEAVE', value: '1', host: 'local' }, [
    { svc: 'llm-7', 'base-url': 'http://127.0.0.1:9', fixtures: join(dir, 'real', 'fleet-fixtures') },
  ])
  const fixtures = join(dir, 'real', 'fleet-fixtures')
  const options = [flag('--report'), flag('--junit'), flag('--summary'), envTwin('GITHUB_STEP_SUMMARY')]
  test.each(cases(options))('$label', async ({ a, b, viaLink }) => {
    const [p, q] = onePath(viaLink)
    const x = a.set(p)
    const y = b.set(q)
    const r = await verifyExactly(['--targets', file, '--mode', 'record', ...x.args, ...y.args], { ...x.env, ...y.env })
    expect(r.exitCode, r.output).toBe(2)
    expect(r.output).toMatch(new RegExp(`${a.name} and ${b.name}: (both name|.* are one path once symlinks are resolved)`))
  })
  test.each(options)('$name on the targets file, or on the folder a target records into, is refused', async (o) => {
    for (const [path, says] of [
      [file, /which this run reads/],
      [fixtures, /both name|one path once/],
    ] as const) {
      const x = o.set(path)
      const r = await verifyExactly(['--targets', file, '--mode', 'record', ...x.args], x.env)
      expect(r.exitCode, r.output).toBe(2)
      expect(r.output).toMatch(says)
    }
  })
})

describe.concurrent('merge-reports: every pair of its outputs and its inputs on one path is refused, and nothing is written', () => {
  const shards = shardReports(fleetTargets(2, '1'), [stepsWith(), stepsWith()], 2).map((s, k) => {
    const p = join(dir, 'real', `shard-${k + 1}.json`)
    writeFileSync(p, JSON.stringify(s))
    return p
  })
  const options: Option[] = [flag('--out'), flag('--junit'), envTwin('GITHUB_STEP_SUMMARY')]
  const merge = async (args: string[], env: Record<string, string>) => {
    let output = ''
    const code = await mergeReports({
      rawArgs: [...args, ...shards],
      env,
      cwd: dir,
      out: { write: (t: string) => (output += t) },
      err: { write: (t: string) => (output += t) },
    })
    return { code, output }
  }
  test.each(cases(options))('$label', async ({ a, b, viaLink }) => {
    const [p, q] = onePath(viaLink)
    const x = a.set(p)
    const y = b.set(q)
    const out = a.name === '--out' || b.name === '--out' ? [] : ['--out', join(dir, `merged-${n}.json`)]
    const r = await merge([...out, ...x.args, ...y.args], { ...x.env, ...y.env })
    expect(r.code, r.output).toBe(2)
    expect(r.output).toMatch(new RegExp(`${a.name} and ${b.name}: (both name|.* are one path once symlinks are resolved)`))
    expect(r.output).toContain('nothing was written')
  })
  test.each(options)('$name on a shard report it reads is refused', async (o) => {
    const x = o.set(shards[1]!.replace(join(dir, 'real'), join(dir, 'link')))
    const out = o.name === '--out' ? [] : ['--out', join(dir, `merged-${++n}.json`)]
    const r = await merge([...out, ...x.args], x.env)
    expect(r.code, r.output).toBe(2)
    expect(r.output).toMatch(/which this run reads/)
  })
})

test('a path is compared with its symlinks resolved, the part not yet made kept as given', () => {
  expect(realPathOf(join(dir, 'link', 'not', 'yet.json'))).toBe(join(realPathOf(join(dir, 'real')), 'not', 'yet.json'))
})
