// armproof verified against a real llama-server (llama.cpp de3ff81, built by
// scripts/real/llama-server.sh; the tiny random-weight model of scripts/real/tiny-gguf.ts), as an
// operator runs it: `verify --engine llama.cpp --runtime process`, the log read with --ledger-cmd.
// Each configuration's every step is asserted on the report. A random-weight model cannot say
// the word, call the tool or see the image: the probes are true reds, asserted as such with their
// messages in llama.cpp's own terms; every other step is asserted green.
import { afterEach, describe, expect, test } from 'vitest'
import type { Report } from '../../helpers/report/json.ts'
import { healthIs, type RealLlama, startLlama } from '../support/llama-server.ts'
import { check, LLAMA_SERVER, requires } from '../support/prerequisites.ts'
import { runVerify } from '../support/run-verify.ts'

const ready = requires(check(LLAMA_SERVER))
const running: RealLlama[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()))
})

async function serve(args: readonly string[], env: Record<string, string> = {}, until: 200 | 503 | null = 200): Promise<RealLlama> {
  const s = await startLlama(args, env)
  running.push(s)
  if (until !== null) await healthIs(s, until)
  return s
}

/** verify of `knob` at `value` against `s`, as an operator of a bare process runs it. */
function verify(s: RealLlama, knob: string, value: string, extra: readonly string[] = []) {
  return runVerify(
    [
      ...['--svc', 'tiny', '--engine', 'llama.cpp', '--runtime', 'process', '--host', 'local', '--base-url', s.baseUrl],
      // No --help-cmd: under --runtime process the help step asks the binary the engine process runs (not PATH's).
      ...['--knob', knob, '--value', value, '--ledger-cmd', `cat ${s.logFile}`],
      ...['--health-budget', '30s', '--meter-window', '5s', '--probe-timeout', '20s', '--host-timeout', '10s'],
      ...extra,
    ],
    { timeoutMs: 120_000 },
  )
}

type Verdicts = Record<string, string>
const verdicts = (r: Report | undefined): Verdicts => Object.fromEntries((r?.steps ?? []).map((s) => [s.id, s.verdict]))
const step = (r: Report | undefined, id: string) => r?.steps.find((s) => s.id === id)
/** A step's evidence, as the test reads it (empty when the step is absent). */
const evidence = <T>(r: Report | undefined, id: string): Partial<T> => (step(r, id)?.evidence ?? {}) as Partial<T>

/** The steps a random-weight model leaves red: the three probes; the rest as given. */
const PROBES_RED = { 'probe.exact': 'failed', 'probe.tools': 'failed', 'probe.vision': 'failed' }
// No run here gives the one-flag law a baseline: its step is skipped on purpose, saying so.
const PROVEN = {
  dropins: 'skipped',
  help: 'passed',
  argv: 'passed',
  ledger: 'passed',
  health: 'passed',
  ...PROBES_RED,
  meter: 'passed',
  'one-flag': 'skipped',
}

/** No next step of a llama.cpp run names another engine's flag. */
function noForeignFlags(r: Report | undefined): void {
  const text = JSON.stringify(r?.steps.map((s) => [s.observed, s.next]))
  for (const foreign of ['--enable-auto-tool-choice', '--tool-call-parser', '--limit-mm-per-prompt', '--max-num-seqs'])
    expect(text).not.toContain(foreign)
}

function probesAreTrueReds(r: Report | undefined): void {
  expect(step(r, 'probe.vision')?.observed).toMatch(/500/)
  expect(step(r, 'probe.vision')?.next).toMatch(/--mmproj/)
  noForeignFlags(r)
}

describe.runIf(ready)('PARALLEL on a real llama-server', () => {
  test('--parallel 2 --metrics: argv, the n_slots line and /props total_slots prove 2; the probes are true reds', async () => {
    const s = await serve(['--metrics', '--parallel', '2'])
    const r = await verify(s, 'PARALLEL', '2')
    expect(verdicts(r.report), r.stdout + r.stderr).toEqual(PROVEN)
    expect(r.exitCode).toBe(1)
    expect(step(r.report, 'ledger')?.observed).toContain('n_slots=2')
    expect(step(r.report, 'meter')?.observed).toContain('total_slots=2')
    // llama-server is not on PATH: the help the step read is the running binary's own.
    expect(evidence<{ binary: { exe: string } }>(r.report, 'help').binary?.exe).toBe(s.bin)
    probesAreTrueReds(r.report)
  })

  test('through its env twin alone (LLAMA_ARG_N_PARALLEL=2): argv reads the process environment', async () => {
    const s = await serve(['--metrics'], { LLAMA_ARG_N_PARALLEL: '2' })
    const r = await verify(s, 'PARALLEL', '2')
    expect(verdicts(r.report), r.stdout + r.stderr).toEqual(PROVEN)
    expect(step(r.report, 'argv')?.observed).toContain('LLAMA_ARG_N_PARALLEL')
  })

  test('env twin 3 and --parallel 2: the command line wins, as the real warn: line says', async () => {
    const s = await serve(['--metrics', '--parallel', '2'], { LLAMA_ARG_N_PARALLEL: '3' })
    expect(s.log()).toContain(
      'warn: LLAMA_ARG_N_PARALLEL environment variable is set, but will be overwritten by command line argument --parallel',
    )
    const r = await verify(s, 'PARALLEL', '2')
    expect(verdicts(r.report), r.stdout + r.stderr).toEqual(PROVEN)
  })

  test('auto (no --parallel): 4 slots, allowed for auto; at -lv 4 the n_parallel is set to auto line is read too', async () => {
    const plain = await serve(['--metrics'])
    const r = await verify(plain, 'PARALLEL', 'auto')
    expect(verdicts(r.report), r.stdout + r.stderr).toEqual(PROVEN)
    expect(step(r.report, 'ledger')?.observed).toContain('n_slots=4')
    const trace = await serve(['--metrics', '-lv', '4'])
    const t = await verify(trace, 'PARALLEL', 'auto')
    expect(verdicts(t.report), t.stdout + t.stderr).toEqual(PROVEN)
    const sources = evidence<{ sources: { id: string; raw?: string; auto?: boolean }[] }>(t.report, 'ledger').sources ?? []
    expect(sources.find((x) => x.id === 'auto-line')).toMatchObject({ raw: '4', auto: true })
    expect(sources.find((x) => x.id === 'context')).toMatchObject({ raw: '4' })
  })

  test('--no-log-prefix, and without --metrics: the same proof', async () => {
    const s = await serve(['--parallel', '2', '--no-log-prefix'])
    const r = await verify(s, 'PARALLEL', '2')
    expect(verdicts(r.report), r.stdout + r.stderr).toEqual(PROVEN)
  })

  test('a server started with --parallel 3 where 2 was asked: red at argv and at the ledger, with what each saw', async () => {
    const s = await serve(['--metrics', '--parallel', '3'])
    const r = await verify(s, 'PARALLEL', '2')
    const v = verdicts(r.report)
    expect(v.argv).toBe('failed')
    expect(v.ledger).toBe('failed')
    expect(v.meter).toBe('failed')
    expect(step(r.report, 'argv')?.observed).toContain('--parallel 3')
    expect(step(r.report, 'ledger')?.observed).toContain('n_slots=3')
    expect(r.exitCode).toBe(1)
  })

  test('verify started while the model loads (/health 503): the ledger is judged once loading ended, the n_slots line printed then', async () => {
    // A 2M-token KV cache takes seconds to allocate: the port listens and answers 503 meanwhile.
    const s = await serve(['--metrics', '--parallel', '2', '-c', '2097152'], {}, 503)
    const r = await verify(s, 'PARALLEL', '2')
    expect(verdicts(r.report), r.stdout + r.stderr).toEqual(PROVEN)
    // Verify began while it loaded: the ledger step waited for the load to end, then read the n_slots line printed then.
    const ledger = evidence<{ readAt: { health: string; waitedMs: number } }>(r.report, 'ledger')
    expect(ledger.readAt?.health).toBe('loaded')
    expect(ledger.readAt?.waitedMs, JSON.stringify(ledger)).toBeGreaterThan(0)
    expect(step(r.report, 'ledger')?.observed).toMatch(/n_slots=2 \(read once \/health answered 200, after .* of loading\)/)
  })
})

describe.runIf(ready)('CACHE_PROMPT, a --no- switch with a meter and no resolved line, on a real llama-server', () => {
  const CACHED = { ...PROVEN, ledger: 'skipped' }
  test('on (the default): argv lacks the flag, the ledger is skipped saying why, llamacpp:prompt_tokens_cached_total moves', async () => {
    const s = await serve(['--metrics', '--parallel', '2'])
    const r = await verify(s, 'CACHE_PROMPT', 'true')
    expect(verdicts(r.report), r.stdout + r.stderr).toEqual(CACHED)
    expect(step(r.report, 'ledger')?.observed).toContain('prints no line resolving --cache-prompt')
    expect(r.report?.meter?.name).toBe('llamacpp:prompt_tokens_cached_total')
    // The tiny model's byte vocabulary counts ~10 tokens a word: the engine's 400 said by how much, the prefix was cut to fit its slot.
    const traffic = evidence<{ traffic: { resized?: string; maxModelLen?: number } }>(r.report, 'meter').traffic
    expect(traffic?.maxModelLen).toBe(2048)
    expect(traffic?.resized).toMatch(/past its context of 2048: cut to \d+ words and sent again/)
  })
  test('--no-cache-prompt at false: argv reads the negation, the counter stays 0 while traffic flows', async () => {
    const s = await serve(['--metrics', '--parallel', '2', '--no-cache-prompt'])
    const r = await verify(s, 'CACHE_PROMPT', 'false')
    expect(verdicts(r.report), r.stdout + r.stderr).toEqual(CACHED)
    expect(step(r.report, 'argv')?.observed).toContain('--no-cache-prompt')
  })
  test('--no-cache-prompt where true was asked: red at argv and at the meter', async () => {
    const s = await serve(['--metrics', '--parallel', '2', '--no-cache-prompt'])
    const r = await verify(s, 'CACHE_PROMPT', 'true')
    const v = verdicts(r.report)
    expect(v.argv).toBe('failed')
    expect(v.meter).toBe('failed')
  })
})
