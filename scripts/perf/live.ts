// Measures 1, 2 and 5 against the reference engine: armproof's whole verify next to the same three
// chat-completion requests sent one after another with curl, and what one verdict costs the
// endpoint as the engine counts it on /stats.
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startEngine, type EngineHandle } from '../../engine/launch.ts'
import {
  PROBE_MAX_TOKENS,
  exactRequest,
  toolsRequest,
  visionRequest,
  type ChatRequest,
  type ProbeColour,
} from '../../helpers/steps/probes/requests.ts'
import { meterPollInterval } from '../../helpers/steps/meter/judge.ts'
import { KNOB_TRAFFIC } from '../../helpers/steps/meter/traffic.ts'
import type { Report, ReportStep } from '../../helpers/report/json.ts'
import { stepOf, type StepId } from '../../helpers/steps/verdict.ts'
import { cleanup, engineArgs, runVerify, type VerifyRun } from '../../test/support/run-verify.ts'

export interface EngineStats {
  served: { chat_completions: number; health: number; metrics: number; models: number }
  tokens: { requested_max: number; prompt: number; completion: number }
}

export interface Cost {
  completions: number
  tokensRequested: number
  metricsScrapes: number
  healthPolls: number
  modelsCalls: number
  meterWindowMs: number
  pollIntervalMs: number
  /** Baseline scrape + one per poll instant 0, I, 2I, … ≤ W. */
  scrapeBound: number
  /** What the meter step says it scraped (baseline included). */
  reportedScrapes: number | null
}

export interface VerifyBreakdown {
  /** Process start → report.startedAt: node boot, module loading, config (before vitest starts). */
  startupMs: number
  /** dropins + help + argv + ledger step durations (host commands through the podman/systemctl shims). */
  hostMs: number
  healthMs: number
  /** The longest probe step (the three run side by side). */
  probesMs: number
  meterMs: number
  /** startedAt → finishedAt minus the steps above: vitest start, collection, reporter, teardown. */
  vitestMs: number
  /** report.finishedAt → process exit: report, junit, truth table, exit. */
  finishMs: number
}

export interface LiveRep {
  verifyMs: number
  curlMs: number[]
  curlSumMs: number
  /** verify / sum of the three sequential curls (measure 1). */
  ratio: number
  healthMs: number
  meterMs: number
  probeMs: number[]
  slowestProbeMs: number
  /** (verify − health − meter) / slowest probe (measure 2). */
  overhead: number
  breakdown: VerifyBreakdown
  cost: Cost
}

export interface FullWindow {
  verifyMs: number
  cost: Cost
  verdict: string
}

/** A knob that brings its own traffic (vLLM's prefix caching: two shared-prefix requests), what one verdict costs the endpoint. */
export interface KnobTrafficCost {
  knob: string
  engine: string
  /** Chat completions the engine served for the whole verdict. */
  completions: number
  /** The bound: the three probes and the knob's own traffic (helpers/steps/meter/traffic.ts). */
  bound: number
  /** What the meter step says it sent. */
  reportedSent: number | null
}

export interface LiveResult {
  /** Absent in results measured before knobs brought their traffic. */
  knobTraffic?: KnobTrafficCost
  latencyMs: number
  meterWindow: string
  baseline: 'curl' | 'node-http'
  curlVersion: string
  reps: LiveRep[]
  fullWindow: FullWindow
  expectedTokens: number
  commandLive: string
  commandFull: string
}

const LIVE_WINDOW = '2s'
const FULL_WINDOW = '3s'

function durationMs(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s)$/.exec(text)
  if (!m) throw new Error(`bad duration ${text}`)
  return Number(m[1]) * (m[2] === 's' ? 1000 : 1)
}

function step<Id extends StepId>(report: Report, id: Id): ReportStep<Id> {
  const s = stepOf(report.steps, id)
  if (!s) throw new Error(`the report has no step ${id}`)
  return s
}

function run(cmd: string, args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : -1) : 0
      resolve({ code, stdout, stderr })
    })
  })
}

/** `curl --version`'s first line, or undefined when there is no curl. */
async function curlVersion(): Promise<string | undefined> {
  try {
    const r = await run('curl', ['--version'])
    return r.code === 0 ? r.stdout.split(' ').slice(0, 2).join(' ') : undefined
  } catch {
    return undefined
  }
}

// The fallback baseline when curl is missing: a bare node:http POST in its own process.
const NODE_POST = `
const http = require('node:http'); const fs = require('node:fs');
const [url, file] = process.argv.slice(1); const body = fs.readFileSync(file);
const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
  res.resume(); res.on('end', () => { process.stdout.write(String(res.statusCode)) })
});
req.on('error', (e) => { process.stderr.write(e.message); process.exit(1) }); req.end(body);
`

/** One request in its own process, timed from spawn to exit; throws unless the engine answered 200. */
async function sequentialOne(baseline: 'curl' | 'node-http', url: string, file: string): Promise<number> {
  const started = performance.now()
  const r =
    baseline === 'curl'
      ? await run('curl', [
          '-sS',
          '-o',
          '/dev/null',
          '-w',
          '%{http_code}',
          '-H',
          'content-type: application/json',
          '--data-binary',
          `@${file}`,
          url,
        ])
      : await run(process.execPath, ['-e', NODE_POST, url, file])
  const ms = performance.now() - started
  if (r.code !== 0 || r.stdout.trim() !== '200')
    throw new Error(`${baseline} POST ${url} failed: exit ${r.code}, status ${r.stdout.trim()} ${r.stderr.trim()}`)
  return ms
}

/** The three bodies armproof sent in this run, rebuilt with the probe builders from the report's evidence. */
function bodiesOf(report: Report): ChatRequest[] {
  const ev = (id: 'probe.exact' | 'probe.tools' | 'probe.vision'): Record<string, unknown> => step(report, id).evidence
  const exact = ev('probe.exact')
  const tools = ev('probe.tools')
  const vision = ev('probe.vision')
  const model = String(exact.model)
  return [
    exactRequest(model, String(exact.word)),
    toolsRequest(model, String(tools.token)),
    visionRequest(model, vision.colour as ProbeColour, vision.decoy as ProbeColour),
  ]
}

async function stats(engine: EngineHandle): Promise<EngineStats> {
  return (await engine.stats()) as EngineStats
}

function costOf(before: EngineStats, after: EngineStats, report: Report, windowMs: number): Cost {
  const interval = meterPollInterval(windowMs)
  const scrapes = step(report, 'meter').evidence.scrapes
  return {
    completions: after.served.chat_completions - before.served.chat_completions,
    tokensRequested: after.tokens.requested_max - before.tokens.requested_max,
    metricsScrapes: after.served.metrics - before.served.metrics,
    healthPolls: after.served.health - before.served.health,
    modelsCalls: after.served.models - before.served.models,
    meterWindowMs: windowMs,
    pollIntervalMs: interval,
    scrapeBound: 1 + Math.floor(windowMs / interval) + 1,
    reportedScrapes: typeof scrapes === 'number' ? scrapes : null,
  }
}

export function breakdownOf(report: Report, spawnedAt: number, wallMs: number): VerifyBreakdown {
  const d = (id: StepId): number => step(report, id).durationMs
  const started = Date.parse(report.startedAt)
  const finished = Date.parse(report.finishedAt)
  const hostMs = d('dropins') + d('help') + d('argv') + d('ledger')
  const probesMs = Math.max(d('probe.exact'), d('probe.tools'), d('probe.vision'))
  const healthMs = d('health')
  const meterMs = d('meter')
  return {
    startupMs: started - spawnedAt,
    hostMs,
    healthMs,
    probesMs,
    meterMs,
    vitestMs: finished - started - hostMs - healthMs - probesMs - meterMs,
    finishMs: spawnedAt + wallMs - finished,
  }
}

async function verifyOnce(
  engine: EngineHandle,
  value: string,
  window: string,
): Promise<{ run: VerifyRun; report: Report; spawnedAt: number; before: EngineStats; after: EngineStats }> {
  const before = await stats(engine)
  const spawnedAt = Date.now()
  const run = await runVerify(
    [
      ...engineArgs(engine),
      '--knob',
      'PREFILL_INTERLEAVE',
      '--value',
      value,
      '--meter-window',
      window,
      '--health-budget',
      '8s',
      '--probe-timeout',
      '30s',
      '--host-timeout',
      '10s',
    ],
    { engine, timeoutMs: 120_000 },
  )
  const after = await stats(engine)
  const report = run.report
  if (run.exitCode !== 0 || !report || report.verdict !== 'green') {
    const why = `verify exited ${run.exitCode} (${report?.verdict ?? 'no report'}):\n${run.stdout.slice(-2000)}\n${run.stderr.slice(-2000)}`
    cleanup(run)
    throw new Error(why)
  }
  return { run, report, spawnedAt, before, after }
}

export function liveCommand(latencyMs: number): { live: string; full: string } {
  const flags = `--knob PREFILL_INTERLEAVE --meter-window ${LIVE_WINDOW} --health-budget 8s --probe-timeout 30s --host-timeout 10s`
  return {
    live: `radiance --prefill-interleave 1 --completion-latency-ms ${latencyMs}; pnpm verify --svc perf-live --base-url <engine> --process rperf-live --host local --value 1 ${flags}`,
    full: `radiance (defaults); pnpm verify --svc perf-full --base-url <engine> --process rperf-full --host local --value 0 ${flags.replace(`--meter-window ${LIVE_WINDOW}`, `--meter-window ${FULL_WINDOW}`)}`,
  }
}

/** One vLLM verdict of ENABLE_PREFIX_CACHING (its meter moves only under two requests sharing a long prefix): the completions it cost. */
async function measureKnobTraffic(log: (line: string) => void): Promise<KnobTrafficCost> {
  const engine = await startEngine({ profile: 'vllm', svc: 'perf-prefix', processName: 'rperf-prefix', args: ['--enable-prefix-caching'] })
  try {
    await engine.waitReady()
    const before = (await engine.stats()) as { served: { chat_completions: number } }
    log('  a knob that brings its traffic (vllm ENABLE_PREFIX_CACHING) …')
    const run = await runVerify(
      [
        ...engineArgs(engine),
        '--engine',
        'vllm',
        '--knob',
        'ENABLE_PREFIX_CACHING',
        '--value',
        'true',
        '--previous',
        'false',
        '--meter-window',
        LIVE_WINDOW,
        '--health-budget',
        '8s',
        '--host-timeout',
        '10s',
      ],
      { engine, timeoutMs: 120_000 },
    )
    const after = (await engine.stats()) as { served: { chat_completions: number } }
    if (run.exitCode !== 0 || !run.report)
      throw new Error(`the vllm prefix-caching verify exited ${run.exitCode}:\n${run.stdout.slice(-2000)}`)
    const sent = (step(run.report, 'meter').evidence as { traffic?: { sent?: number } }).traffic?.sent
    cleanup(run)
    return {
      knob: 'ENABLE_PREFIX_CACHING',
      engine: 'vllm',
      completions: after.served.chat_completions - before.served.chat_completions,
      bound: 3 + KNOB_TRAFFIC['shared-prefix'].completions,
      reportedSent: typeof sent === 'number' ? sent : null,
    }
  } finally {
    await engine.stop()
  }
}

export async function measureLive(options: { latencyMs: number; reps: number; log: (line: string) => void }): Promise<LiveResult> {
  const { latencyMs, reps, log } = options
  const version = await curlVersion()
  const baseline: 'curl' | 'node-http' = version ? 'curl' : 'node-http'
  const dir = mkdtempSync(join(tmpdir(), 'armproof-perf-'))
  const engines: EngineHandle[] = []
  try {
    // 5, second half: a run whose meter must watch its whole window (the knob at its default, a
    // rollback), so the scrape count meets its bound. Also warms vitest and the compile cache.
    const full = await startEngine({ svc: 'perf-full', processName: 'rperf-full', args: [] })
    engines.push(full)
    await full.waitReady()
    log(`  full-window run (--value 0, --meter-window ${FULL_WINDOW}) …`)
    const f = await verifyOnce(full, '0', FULL_WINDOW)
    const fullWindow: FullWindow = {
      verifyMs: f.run.ms,
      cost: costOf(f.before, f.after, f.report, durationMs(FULL_WINDOW)),
      verdict: f.report.verdict,
    }
    cleanup(f.run)
    await full.stop()

    const engine = await startEngine({
      svc: 'perf-live',
      processName: 'rperf-live',
      args: ['--prefill-interleave', '1', '--completion-latency-ms', String(latencyMs)],
    })
    engines.push(engine)
    await engine.waitReady()
    const url = `${engine.baseUrl}/v1/chat/completions`
    const out: LiveRep[] = []
    for (let i = 0; i < reps; i++) {
      const v = await verifyOnce(engine, '1', LIVE_WINDOW)
      const { report } = v
      const files = bodiesOf(report).map((body, k) => {
        const file = join(dir, `probe-${i}-${k}.json`)
        writeFileSync(file, JSON.stringify(body))
        return file
      })
      const curlMs: number[] = []
      for (const file of files) curlMs.push(await sequentialOne(baseline, url, file))
      const curlSumMs = curlMs.reduce((a, b) => a + b, 0)
      const probeMs = (['probe.exact', 'probe.tools', 'probe.vision'] satisfies StepId[]).map((id) => Number(step(report, id).evidence.ms))
      const slowestProbeMs = Math.max(...probeMs)
      const healthMs = step(report, 'health').durationMs
      const meterMs = step(report, 'meter').durationMs
      const rep: LiveRep = {
        verifyMs: v.run.ms,
        curlMs,
        curlSumMs,
        ratio: v.run.ms / curlSumMs,
        healthMs,
        meterMs,
        probeMs,
        slowestProbeMs,
        overhead: (v.run.ms - healthMs - meterMs) / slowestProbeMs,
        breakdown: breakdownOf(report, v.spawnedAt, v.run.ms),
        cost: costOf(v.before, v.after, report, durationMs(LIVE_WINDOW)),
      }
      cleanup(v.run)
      out.push(rep)
      log(
        `  live ${i + 1}/${reps}: verify ${(rep.verifyMs / 1000).toFixed(2)} s, curl ${(curlSumMs / 1000).toFixed(2)} s (${rep.ratio.toFixed(2)}×), overhead ${rep.overhead.toFixed(2)}`,
      )
    }
    const knobTraffic = await measureKnobTraffic(log)
    const cmd = liveCommand(latencyMs)
    return {
      knobTraffic,
      latencyMs,
      meterWindow: LIVE_WINDOW,
      baseline,
      curlVersion: version ?? 'none (node:http child process)',
      reps: out,
      fullWindow,
      expectedTokens: 3 * PROBE_MAX_TOKENS,
      commandLive: cmd.live,
      commandFull: cmd.full,
    }
  } finally {
    for (const e of engines) await e.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}
