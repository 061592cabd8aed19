// A scratch vault and report for writeback tests, and a green report that passes the gate: every
// field of the report's type, nine passed steps. No vitest here: scripts/faults-doc.ts imports the
// fault table that uses it.
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import { runId } from '../../helpers/report/identity.ts'
import { STEP_IDS } from '../../helpers/steps/verdict.ts'
import { writeback, type WritebackIo } from '../../helpers/writeback/command.ts'
import { removeTempDir, tempDir } from './temp-dir.ts'

export const METER = 'radiance:engine_steps_held_total'

/** Every step, all passed. */
export function passedSteps(): Record<string, unknown>[] {
  return STEP_IDS.map((id) => ({
    id,
    title: `the ${id} step`,
    verdict: 'passed',
    expected: 'x',
    observed: 'x',
    where: 'x',
    evidence: {},
    durationMs: 1,
  }))
}

/**
 * A report's run identity as pnpm verify writes it (helpers/report/identity.ts), for the report's
 * svc, knob, values and mode, with these declared skips and endpoint; its id is the digest of its fields.
 */
export function runOf(
  report: Record<string, unknown>,
  options: { skips?: string[]; baseUrl?: string | null } = {},
): Record<string, unknown> {
  const target = {
    svc: report.svc,
    knob: report.knob,
    value: report.expected,
    previous: report.previous,
    baseUrl: options.baseUrl === undefined ? 'http://gpu-7:8000' : options.baseUrl,
    model: null,
    host: { kind: 'local' },
    process: 'radiance',
    deployUser: null,
    ledgerCmd: 'podman logs --tail 100000 {svc}',
    helpCmd: 'podman exec {svc} radiance --help',
    unit: report.svc,
    dropinCheck: !(options.skips ?? []).includes('dropins'),
    healthBudgetMs: 900_000,
    meterWindowMs: 300_000,
    probeTimeoutMs: 120_000,
    hostTimeoutMs: 30_000,
    // --skip: the probes the run skipped on purpose, as its options say (the declared skips follow from them).
    skip: (options.skips ?? []).filter((id) => id.startsWith('probe.')),
  }
  const fields = { mode: report.mode as string, skips: options.skips ?? [], target }
  return { id: runId(fields), ...fields }
}

/** A green live report that passes the gate, finished at `finishedAt`; `run` adds its run identity (as pnpm verify writes it now). */
export function greenReport(
  finishedAt: string,
  over: Record<string, unknown> = {},
  run?: Parameters<typeof runOf>[1],
): Record<string, unknown> {
  const report = {
    svc: 'llm-7',
    knob: 'PREFILL_INTERLEAVE',
    expected: '1',
    previous: '0',
    mode: 'live',
    verdict: 'green',
    startedAt: finishedAt,
    finishedAt,
    steps: passedSteps(),
    meter: { name: METER, first: 0, last: 126, movedAt: finishedAt, movedAfterMs: 220_000, labels: {} },
    rollback: 'PREFILL_INTERLEAVE=0 then redeploy --service llm-7',
    error: null,
    notes: [],
    exitCode: 0,
    tool: { name: 'armproof', version: '0.1.0' },
    ...over,
  }
  return run ? { ...report, run: runOf(report, run) } : report
}

export const PAGE = ['---', 'service: llm-7', '---', '# llm-7', '', '## Knob log', '', '## Contacts', '', '- oncall: #infra', ''].join('\n')

export interface Run {
  code: number
  out: string
  err: string
}

export interface Sandbox {
  dir: string
  vault: string
  reportPath: string
  run(args?: readonly string[], over?: Partial<WritebackIo>): Promise<Run>
  page(rel: string): Promise<string>
  files(): Promise<string[]>
  remove(): Promise<void>
}

/** A temp dir with `vault/` holding `pages` and `report.json` holding `report` (a string or Buffer is written as is); removed after the test file if not before. */
export async function sandbox(
  pages: Record<string, string | Buffer>,
  report: Record<string, unknown> | string | Buffer = greenReport(new Date().toISOString()),
): Promise<Sandbox> {
  const dir = tempDir('armproof-wb-')
  const vault = join(dir, 'vault')
  await mkdir(vault)
  for (const [rel, text] of Object.entries(pages)) {
    await mkdir(dirname(join(vault, rel)), { recursive: true })
    await writeFile(join(vault, rel), text)
  }
  const reportPath = join(dir, 'report.json')
  await writeFile(reportPath, typeof report === 'string' || Buffer.isBuffer(report) ? report : JSON.stringify(report, null, 2))
  return {
    dir,
    vault,
    reportPath,
    page: (rel) => readFile(join(vault, rel), 'utf8'),
    files: async () => (await readdir(vault, { recursive: true })).map((f) => relative(vault, join(vault, f))).sort(),
    remove: async () => removeTempDir(dir),
    async run(args = [], over = {}) {
      let out = ''
      let err = ''
      const code = await writeback({
        rawArgs: ['--report', reportPath, '--vault', vault, ...args],
        env: {},
        cwd: dir,
        out: { write: (t: string) => (out += t) },
        err: { write: (t: string) => (err += t) },
        ...over,
      })
      return { code, out, err }
    },
  }
}

/** Runs `fn` in a fresh sandbox (the arguments of sandbox() after it) and removes the sandbox after, whatever happens. */
export async function inSandbox<T>(fn: (box: Sandbox) => Promise<T>, ...args: Parameters<typeof sandbox>): Promise<T> {
  const box = await sandbox(...args)
  try {
    return await fn(box)
  } finally {
    await box.remove()
  }
}
