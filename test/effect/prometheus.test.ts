// `effect` against a real Prometheus: Debian's promtool backfills the scenarios' OpenMetrics (vLLM's
// bucket edges, a daily pattern, one target each) into a TSDB, Debian's prometheus serves it on
// loopback, and every scenario is judged through the real HTTP seam, in-process, from one start.
import { execFile } from 'node:child_process'
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { existsSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { effect } from '../../helpers/effect/command.ts'
import type { EffectResult, MetricResult } from '../../helpers/effect/result.ts'
import { writeback } from '../../helpers/writeback/command.ts'
import { check, PROMETHEUS, requires } from '../support/prerequisites.ts'
import { greenReport, passedSteps, PAGE } from '../support/writeback-sandbox.ts'
import { ARM, HOUR, MINUTE, SCENARIOS } from './scenarios.ts'
import { backfilledPrometheus, type BackfilledPrometheus } from './tsdb.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
/** The README's picture: the TTFT of the regression scenario, as a real run writes it. */
const README_PICTURE = join(ROOT, 'docs/effect/regression-ttft.svg')

// Without prometheus and promtool the tests are reported as not run (under CI=true: failed).
const ready = requires(check(PROMETHEUS))
let prom: BackfilledPrometheus
let dir: string

beforeAll(async () => {
  if (!ready) return
  ;[prom, dir] = await Promise.all([backfilledPrometheus(Object.values(SCENARIOS)), mkdtemp(join(tmpdir(), 'armproof-effect-'))])
}, 60_000)

afterAll(async () => {
  await prom?.stop()
  if (dir) await rm(dir, { recursive: true, force: true })
})

interface Judged {
  code: number
  out: string
  err: string
  result: EffectResult | null
  metric: (id: string) => MetricResult
}

let runs = 0
/** One effect run of the scenario `name`, in-process; its --out read back. */
async function judge(
  name: string,
  extra: readonly string[] = [],
  options: { arm?: readonly string[]; env?: Record<string, string>; at?: number; knob?: readonly string[] } = {},
): Promise<Judged> {
  const out = join(dir, `run-${++runs}`, 'effect.json')
  let stdout = ''
  let stderr = ''
  const arm = options.arm ?? [
    '--svc',
    'llm-7',
    ...(options.knob ?? ['--knob', 'PREFILL_INTERLEAVE', '--value', '1']),
    '--armed-at',
    new Date(options.at ?? ARM).toISOString(),
    '--prometheus-url',
    prom.url,
    '--prometheus-match',
    `{instance="${name}:8000"}`,
  ]
  const code = await effect({
    rawArgs: [...arm, '--out', out, ...extra],
    env: { VERIFY_NO_DOTENV: '1', ...options.env },
    cwd: dir,
    out: { write: (s: string) => (stdout += s) },
    err: { write: (s: string) => (stderr += s) },
  })
  const result = existsSync(out) ? (JSON.parse(await readFile(out, 'utf8')) as EffectResult) : null
  const metric = (id: string) => {
    const m = result?.metrics.find((x) => x.id === id)
    if (!m) throw new Error(`no metric ${id} in the result; stdout:\n${stdout}\nstderr:\n${stderr}`)
    return m
  }
  return { code, out: stdout, err: stderr, result, metric }
}

const verdicts = (j: Judged) => Object.fromEntries(j.result!.metrics.map((m) => [m.id, m.verdict]))

describe('effect against a real Prometheus, one scenario per target', () => {
  test('TTFT doubled in the hours that climb from quiet to busy: worse (exit 1), every other latency and throughput no change, the knob acting on its meter', async () => {
    const j = await judge('regression')
    expect(j.code, j.out + j.err).toBe(1)
    // radiance's names are backed by no real build's output: the result and the terminal say so
    expect(j.result!.engine.unverified).toMatch(/^the radiance profile is not verified against a real build/)
    expect(j.out).toContain('  note: the radiance profile is not verified against a real build')
    expect(verdicts(j)).toEqual({
      ttft: 'worse',
      itl: 'no change',
      e2e: 'no change',
      requests: 'no change',
      tokens: 'no change',
      preemptions: 'no change',
      'decode-step': 'no change',
      'mixed-step': 'no change',
      meter: 'changed',
    })
    const ttft = j.metric('ttft')
    expect(ttft.shifts.p50!.relative!).toBeGreaterThan(0.8)
    expect(ttft.shifts.p95!.relative!).toBeGreaterThan(0.5)
    expect(ttft.shifts.p95).toMatchObject({ significant: true, practical: true })
    expect(ttft.shifts.p95!.low!).toBeGreaterThan(0)
    expect(ttft.test).toMatchObject({ method: 'paired', scale: 'log' })
    expect(ttft.shifts.p95!.p).toBeLessThan(0.01)
    expect(j.result!.windows.baseline).toMatchObject({ kind: 'yesterday', from: '2025-03-03T06:00:00Z', to: '2025-03-03T12:00:00Z' })
    // Power said aloud: every judged statistic states the smallest shift this run could have detected.
    for (const m of j.result!.metrics) {
      expect(m.power, m.id).not.toBeNull()
      expect(m.power!.chunks, m.id).toBe(6)
      expect(m.power!.after, m.id).toBeGreaterThan(0)
    }
    expect(j.metric('itl').power!.detectable.p50!).toBeLessThan(0.1)
    expect(j.metric('itl').shifts.p50).toMatchObject({ state: 'within', chunks: 6 })
    expect(j.out).toMatch(/metric\s+baseline\s+before\s+after\s+shift\s+could detect\s+verdict/)
    expect(j.out).toContain('itl no change: p50 ')
    expect(j.result!.engine).toEqual({
      name: 'radiance',
      notJudged: [],
      unverified: expect.stringMatching(/^the radiance profile is not verified/),
    })
    // about 65,000 requests in the six hours after the arm
    expect(j.metric('ttft').after!.count).toBeGreaterThan(55_000)
    expect(j.result!.windows.baseline.why).toContain('does not hold vllm:time_to_first_token_seconds through the same hours a week before')
    // The terminal: the table's columns, the reason and the closing line.
    expect(j.out).toMatch(/ttft p50 \/ p95 .* worse/)
    expect(j.out).toContain('armproof effect: WORSE: ttft worse')
    // Bounded: 2 queries per family and window (11 families × 3 windows), the baseline probe.
    expect(j.result!.queries).toBe(11 * 3 * 2 + 1)
    // Outputs: a picture per latency distribution beside --out; the README's is this very run's.
    expect(ttft.picture).toBe('effect.ttft.svg')
    const svg = await readFile(join(dir, `run-${runs}`, 'effect.ttft.svg'), 'utf8')
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/)
    expect(svg).toContain('p95 ')
    const fresh = join(dir, 'regression-ttft.svg')
    await writeFile(fresh, svg)
    expect(
      readFileSync(README_PICTURE, 'utf8'),
      `docs/effect/regression-ttft.svg is not what a run writes now; if the change is meant, copy ${fresh} over it`,
    ).toBe(svg)
  })

  test('ITL 20% faster: better, TTFT no change, exit 0', async () => {
    const j = await judge('improvement', ['--metrics', 'ttft,itl,requests'])
    expect(j.code, j.out + j.err).toBe(0)
    expect(verdicts(j)).toEqual({ ttft: 'no change', itl: 'better', requests: 'no change' })
    expect(j.metric('itl').shifts.p50!.high!).toBeLessThan(-0.1)
    expect(j.result!.verdict).toBe('better')
  })

  test("identical distributions: no change, every interval within ±threshold, exit 0, and the quantiles are histogram_quantile's over the same increases", async () => {
    const j = await judge('unchanged', ['--metrics', 'ttft,requests'])
    expect(j.code, j.out + j.err).toBe(0)
    expect(verdicts(j)).toEqual({ ttft: 'no change', requests: 'no change' })
    for (const q of ['p50', 'p95']) {
      const s = j.metric('ttft').shifts[q]!
      expect(s.low!, q).toBeGreaterThan(-0.1)
      expect(s.high!, q).toBeLessThan(0.1)
    }
    const after = j.metric('ttft').after!
    const end = Date.parse(after.to) / 1000
    for (const [q, ours] of [
      [0.5, after.p50!],
      [0.95, after.p95!],
    ] as const) {
      const { result } = await prom.query(
        `histogram_quantile(${q}, sum by (le) (increase(vllm:time_to_first_token_seconds_bucket{instance="unchanged:8000"}[6h] @ ${end})))`,
      )
      const theirs = Number((result[0] as { value: [number, string] }).value[1])
      expect(Math.abs(ours / theirs - 1), `p${q * 100}: ours ${ours}, Prometheus ${theirs}`).toBeLessThan(0.02)
    }
  })

  test('too little traffic: inconclusive (exit 3), never no change', async () => {
    const j = await judge('sparse', ['--metrics', 'ttft,requests'])
    expect(j.code).toBe(3)
    expect(verdicts(j)).toEqual({ ttft: 'inconclusive', requests: 'inconclusive' })
    expect(j.metric('ttft').reason).toMatch(
      /^too little traffic: \d+ observations in the baseline and \d+ after the arm; the judgement needs 100 in each/,
    )
  })

  test('bucket edges that change at the arm: inconclusive, naming both layouts', async () => {
    const j = await judge('edges', ['--metrics', 'ttft'])
    expect(j.code).toBe(3)
    const m = j.metric('ttft')
    expect(m.verdict).toBe('inconclusive')
    expect(m.reason).toContain(
      'the bucket edges of vllm:time_to_first_token_seconds_bucket{instance="edges:8000"} differ between the baseline (le 0.001, 0.005',
    )
    expect(m.reason).toContain('and the after window (le 0.005, 0.01, 0.025')
  })

  test('a restart at the arm (down from 09:05 to 09:35, counters back from zero): accounted for as increase() does, and the regression still found', async () => {
    const j = await judge('reset', ['--metrics', 'ttft,requests'])
    expect(j.code, j.out + j.err).toBe(1)
    const m = j.metric('ttft')
    expect(m.verdict).toBe('worse')
    expect(m.notes.join(' ')).toMatch(/the arm's restart: no sample of .* from 06:0\dZ to 06:3\dZ .*the counters came back from zero/)
    expect(m.after!.resets).toBe(1)
  })

  test('a scrape gap of an hour in the after window: inconclusive, with the gap and the scrape interval', async () => {
    const j = await judge('gap', ['--metrics', 'ttft,requests'])
    expect(j.code).toBe(3)
    expect(verdicts(j)).toEqual({ ttft: 'inconclusive', requests: 'inconclusive' })
    expect(j.metric('ttft').reason).toMatch(
      /^a gap in the after window: no sample of .* from 07:5\dZ to 0[89]:\d\dZ .*more than 5 scrape intervals \(5m 00s\)/,
    )
  })

  test('a cadence change with latency unchanged: the meter and mixed step time changed, latency no change, exit 0', async () => {
    const j = await judge('cadence', ['--metrics', 'ttft,itl,decode-step,mixed-step,meter'])
    expect(j.code, j.out + j.err).toBe(0)
    expect(verdicts(j)).toEqual({
      ttft: 'no change',
      itl: 'no change',
      'decode-step': 'no change',
      'mixed-step': 'changed',
      meter: 'changed',
    })
    expect(j.metric('meter')).toMatchObject({
      title: 'engine_steps_held per step',
      series: ['radiance:engine_steps_held_total{instance="cadence:8000"}', 'radiance:engine_steps_total{instance="cadence:8000"}'],
    })
    expect(j.metric('meter').shifts.rate).toMatchObject({ fromZero: true, relative: null })
  })

  test('the seasonality trap: the six hours after the arm exactly the busy ones, the knob doing nothing: like hours say no change; the night before the arm as the baseline says worse', async () => {
    const at = ARM + 3 * HOUR
    const like = await judge('busy', ['--metrics', 'ttft'], { at })
    expect(like.code, like.out + like.err).toBe(0)
    expect(verdicts(like)).toEqual({ ttft: 'no change' })
    expect(like.metric('ttft').test).toMatchObject({ method: 'paired' })
    const night = await judge('busy', ['--metrics', 'ttft', '--baseline', 'before', '--before', '12h'], { at })
    expect(night.metric('ttft').test).toMatchObject({ method: 'unpaired' })
    expect(night.code).toBe(1)
    expect(verdicts(night)).toEqual({ ttft: 'worse' })
    expect(night.result!.windows.baseline).toMatchObject({ kind: 'before', from: '2025-03-03T21:00:00Z', to: '2025-03-04T09:00:00Z' })
  })

  test('ITL not exported is inconclusive, never no change, and says where latency and cadence live', async () => {
    const j = await judge('unchanged', ['--metrics', 'ttft,itl'])
    expect(j.code).toBe(3)
    expect(verdicts(j)).toEqual({ ttft: 'no change', itl: 'inconclusive' })
    expect(j.metric('itl')).toMatchObject({ baseline: null, after: null })
    expect(j.metric('itl').reason).toMatch(/^not exported by this engine: .*inter-token latency is judged on every engine that has it/)
    expect(j.metric('itl').next).toContain('latency lives under vllm: or sglang:, cadence under radiance:')
    // vLLM's profile knows ITL's earlier name: the next step says it
    const vllm = await judge('unchanged', ['--metrics', 'ttft,itl'], {
      knob: ['--engine', 'vllm', '--knob', 'MAX_NUM_SEQS', '--value', '128'],
    })
    expect(vllm.code).toBe(3)
    expect(vllm.metric('itl').next).toContain('an older build serves it as vllm:time_per_output_token_seconds (before 0.13)')
  })

  test('an older build without generation_tokens_total and num_preemptions_total: those are listed as not exported and leave the verdict alone (no change, exit 0); named by --metrics, one is inconclusive', async () => {
    const j = await judge('older')
    expect(j.code, j.out + j.err).toBe(0)
    expect(verdicts(j)).toEqual({
      ttft: 'no change',
      itl: 'no change',
      e2e: 'no change',
      requests: 'no change',
      tokens: 'not exported',
      preemptions: 'not exported',
      'decode-step': 'no change',
      'mixed-step': 'no change',
      meter: 'no change',
    })
    expect(j.result!.verdict).toBe('no change')
    expect(j.out).toMatch(/tokens not exported: not exported by this engine: Prometheus holds no sample of vllm:generation_tokens_total/)
    const named = await judge('older', ['--metrics', 'ttft,preemptions'])
    expect(named.code).toBe(3)
    expect(verdicts(named)).toEqual({ ttft: 'no change', preemptions: 'inconclusive' })
    expect(named.metric('preemptions').reason).toContain('--metrics named it')
  })

  test('a family exported after the arm but not before it: inconclusive (that is a change), the rest judged', async () => {
    const j = await judge('newbuild', ['--metrics', 'ttft,requests,preemptions'])
    expect(j.code).toBe(3)
    expect(verdicts(j)).toEqual({ ttft: 'no change', requests: 'no change', preemptions: 'inconclusive' })
    expect(j.metric('preemptions').reason).toMatch(
      /is present in the after window .* and absent in the baseline window .*started exporting it/,
    )
  })

  test('llama.cpp, judged by its own counters (no histograms): seconds per generated token 50% slower is worse; what it cannot be judged by is said', async () => {
    const summary = join(dir, 'llama.md')
    const j = await judge('llama', ['--summary', summary], {
      knob: ['--engine', 'llama.cpp', '--knob', 'PARALLEL', '--value', '2', '--previous', '4'],
    })
    expect(j.code, j.out + j.err).toBe(1)
    expect(verdicts(j)).toEqual({ tokens: 'no change', 'token-time': 'worse', 'prompt-time': 'no change' })
    expect(j.metric('token-time').series).toEqual([
      'llamacpp:tokens_predicted_seconds_total{instance="llama:8000"}',
      'llamacpp:tokens_predicted_total{instance="llama:8000"}',
    ])
    expect(j.result!.engine.name).toBe('llama.cpp')
    // its names are checked against the real de3ff81 build: no note of an unverified profile
    expect(j.result!.engine.unverified).toBeUndefined()
    expect(j.out).not.toContain('not verified against a real build')
    expect(j.result!.engine.notJudged.map((n) => n.id)).toEqual(['ttft', 'itl', 'e2e', 'requests', 'preemptions'])
    expect(j.out).toContain('not judged on llama.cpp: ttft (llama.cpp exports no time to first token histogram)')
    // The Markdown summary says the same: the power column, how the hours were compared, what is not judged.
    const md = await readFile(summary, 'utf8')
    expect(md).toContain('| metric | baseline | before | after | shift | could detect | verdict |')
    expect(md).toMatch(/\| token-time \| [^|]+ \| [^|]+ \| [^|]+ \| \+\d+% \| ±[\d.]+% \| worse \|/)
    expect(md).toContain('paired t over the chunk pairs, 90% intervals')
    expect(md).toContain('Not judged on llama.cpp: ttft')
    expect(md).not.toContain('not verified against a real build')
    const asked = await judge('llama', ['--metrics', 'ttft'], { knob: ['--engine', 'llama.cpp', '--knob', 'PARALLEL', '--value', '2'] })
    expect(asked.code).toBe(2)
    expect(asked.err).toContain('ttft is not judged for llama.cpp (llama.cpp exports no time to first token histogram)')
  })

  test('--engine vllm reads the vLLM names: its latency judged, its knob named in its own catalog', async () => {
    const j = await judge('regression', ['--metrics', 'ttft,itl'], {
      knob: ['--engine', 'vllm', '--knob', 'max-num-seqs', '--value', '128', '--previous', '256'],
    })
    expect(j.code, j.out + j.err).toBe(1)
    expect(verdicts(j)).toEqual({ ttft: 'worse', itl: 'no change' })
    expect(j.result!.arm.knob).toBe('MAX_NUM_SEQS')
  })

  test('--armed-at in the future says so and names --armed-at (exit 2, nothing judged)', async () => {
    const j = await judge('unchanged', ['--metrics', 'ttft'], { at: Date.now() + HOUR })
    expect(j.code).toBe(2)
    expect(j.result).toBeNull()
    expect(j.err).toMatch(/--armed-at \S+ is in the future \(now is /)
    expect(j.err).not.toContain('--after')
  })

  test("a selector that takes several targets is the operator's to fix: exit 2, nothing judged", async () => {
    const j = await judge('unchanged', ['--metrics', 'ttft', '--prometheus-match', '{model_name="qwen3"}'])
    expect(j.code).toBe(2)
    expect(j.result).toBeNull()
    expect(j.err).toMatch(/takes the series of 11 targets/)
  })
})

describe('the arm from a green verify report, and the vault', () => {
  const writeReport = async (name: string, over: Record<string, unknown> = {}) => {
    const steps = passedSteps().map((s) =>
      s.id === 'health'
        ? { ...s, where: `GET http://${name}:8000/health` }
        : s.id === 'meter'
          ? { ...s, evidence: { prometheus: { url: prom.url } } }
          : s,
    )
    const report = greenReport(new Date(ARM + 45 * MINUTE).toISOString(), {
      startedAt: new Date(ARM + 40 * MINUTE).toISOString(),
      steps,
      ...over,
    })
    const path = join(dir, `${name}-report.json`)
    await writeFile(path, JSON.stringify(report))
    return path
  }

  test('the report gives the service, knob, endpoint and Prometheus; the arm is the restart just before its proof', async () => {
    const report = await writeReport('reset')
    const j = await judge('reset', ['--metrics', 'ttft', '--after', '6h'], { arm: ['--report', report] })
    expect(j.code, j.out + j.err).toBe(1)
    expect(j.result!.arm).toMatchObject({
      svc: 'llm-7',
      knob: 'PREFILL_INTERLEAVE',
      value: '1',
      previous: '0',
      from: 'restart',
      endpoint: 'http://reset:8000',
    })
    expect(Date.parse(j.result!.arm.at)).toBeGreaterThanOrEqual(ARM + 30 * MINUTE)
    expect(Date.parse(j.result!.arm.at)).toBeLessThanOrEqual(ARM + 40 * MINUTE)
    expect(j.result!.prometheus.selector).toBe('{instance="reset:8000"}')
  })

  test("--armed-at after the report's own time says so (exit 2)", async () => {
    const report = await writeReport('reset')
    const j = await judge('reset', ['--metrics', 'ttft', '--armed-at', new Date(ARM + 2 * HOUR).toISOString()], {
      arm: ['--report', report],
    })
    expect(j.code).toBe(2)
    expect(j.err).toMatch(/--armed-at \S+ is after the report's own time \(its proof finished 2025-03-04T06:45:00Z\)/)
  })

  test('a report that is not green is refused before contact (exit 2)', async () => {
    const red = await writeReport('regression', { verdict: 'red', exitCode: 1 })
    const j = await judge('regression', [], { arm: ['--report', red] })
    expect(j.code).toBe(2)
    expect(j.err).toContain('nothing was contacted')
    expect(j.err).toMatch(/not the green report of an arm \(verdict and exitCode\)/)
  })

  test("--vault writes one line under the arm's green entry, once; a page without that entry is refused and left as it was", async () => {
    const report = await writeReport('regression')
    const vault = join(dir, 'vault')
    await mkdir(join(vault, 'endpoints'), { recursive: true })
    const page = join(vault, 'endpoints', 'llm-7.md')
    await writeFile(page, PAGE)
    const quiet = { write: () => true }
    // Without the arm's entry: refused, nothing contacted, the page untouched.
    const refused = await judge('regression', ['--metrics', 'ttft', '--vault', vault], { arm: ['--report', report] })
    expect(refused.code).toBe(2)
    expect(refused.err).toContain('holds no green entry for this arm')
    expect(await readFile(page, 'utf8')).toBe(PAGE)
    // The arm's entry, as writeback writes it (the report is old: --max-age lets it through).
    expect(
      await writeback({
        rawArgs: ['--report', report, '--vault', vault, '--max-age', '900000h'],
        env: {},
        cwd: dir,
        out: quiet,
        err: quiet,
      }),
    ).toBe(0)
    const before = await readFile(page, 'utf8')
    const j = await judge('regression', ['--metrics', 'ttft,requests', '--vault', vault], { arm: ['--report', report] })
    expect(j.code, j.out + j.err).toBe(1)
    const lines = (await readFile(page, 'utf8')).split('\n')
    const entry = lines.findIndex((l) => l.includes('<!-- armproof:llm-7:PREFILL_INTERLEAVE:'))
    expect(lines[entry + 1]).toMatch(/^ {2}rollback: /)
    expect(lines[entry + 2]).toMatch(
      /^ {2}effect: worse · ttft worse \(p95 \+\d+%\) · requests no change \(armproof effect, after .* against the same hours a day before\) <!-- armproof-effect:llm-7:PREFILL_INTERLEAVE:/,
    )
    expect(lines.filter((_, i) => i !== entry + 2)).toEqual(before.split('\n'))
    const again = await judge('regression', ['--metrics', 'ttft,requests', '--vault', vault], { arm: ['--report', report] })
    expect(again.out).toContain('already there')
    expect((await readFile(page, 'utf8')).split('\n')).toEqual(lines)
  })
})

describe('record and replay', () => {
  test('a recorded run replays offline, in-process and from the command line with sockets refused, to the same result', async () => {
    const fixtures = join(dir, 'fixtures-reset')
    const rec = await judge('reset', ['--metrics', 'ttft,requests', '--mode', 'record', '--fixtures', fixtures])
    expect(rec.code, rec.out + rec.err).toBe(1)
    expect(existsSync(join(fixtures, 'effect.json')) && existsSync(join(fixtures, 'http.json'))).toBe(true)
    const replay = await judge('reset', ['--mode', 'replay', '--fixtures', fixtures], { arm: [] })
    expect(replay.code, replay.out + replay.err).toBe(1)
    const same = (r: EffectResult) => ({ ...r, mode: null, metrics: r.metrics.map((m) => ({ ...m, picture: null })) })
    expect(same(replay.result!)).toEqual(same(rec.result!))
    expect(replay.result!.mode).toBe('replay')
    // --json: the result alone on stdout (the very one --out holds), every other line on stderr.
    const json = await judge('reset', ['--mode', 'replay', '--fixtures', fixtures, '--json'], { arm: [] })
    expect(json.code, json.err).toBe(1)
    expect(JSON.parse(json.out)).toEqual(json.result)
    expect(json.err).toContain('armproof effect: WORSE: ttft worse')
    // The command itself, with every socket refused: the same exit, no connection tried.
    const log = join(dir, 'sockets.log')
    const run = await promisify(execFile)(process.execPath, [join(ROOT, 'bin/effect.ts'), '--mode', 'replay', '--fixtures', fixtures], {
      cwd: dir,
      env: {
        ...process.env,
        VERIFY_NO_DOTENV: '1',
        NODE_OPTIONS: `--import ${join(ROOT, 'test/support/no-sockets.ts')}`,
        ARMPROOF_SOCKET_LOG: log,
      },
    }).then(
      () => ({ code: 0, stdout: '' }),
      (e: { code: number; stdout: string }) => e,
    )
    expect(run.code, run.stdout).toBe(1)
    expect(run.stdout).toContain('armproof effect: WORSE: ttft worse')
    expect(existsSync(log) ? readFileSync(log, 'utf8') : '').toBe('')
    // An edited recording is refused before anything is judged.
    const http = join(fixtures, 'http.json')
    await writeFile(http, (await readFile(http, 'utf8')).replace('"status": 200', '"status": 200 '))
    const edited = await judge('reset', ['--mode', 'replay', '--fixtures', fixtures], { arm: [] })
    expect(edited.code).toBe(2)
    expect(edited.err).toContain('fixtures edited since recording')
  })
})
