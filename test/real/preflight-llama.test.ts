// `armproof preflight` against a real llama-server (llama.cpp de3ff81, the tiny random-weight model),
// as an operator of a bare process runs it before the deploy: its own --help (asked of the binary
// the process runs) lists --parallel, it runs --previous, the env file changes PARALLEL alone; a
// misspelt flag (a --catalog's --paralel) is refused by the real --help.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { PREFLIGHT_STEP_IDS } from '../../helpers/steps/preflight/registry.ts'
import { gitCheckout } from '../support/git-checkout.ts'
import { healthIs, type RealLlama, startLlama } from '../support/llama-server.ts'
import { preflightInProcess } from '../support/preflight-in-process.ts'
import { check, LLAMA_SERVER, requires } from '../support/prerequisites.ts'
import { tempDir } from '../support/temp-dir.ts'

const ready = requires(check(LLAMA_SERVER))

describe.runIf(ready)('preflight on a real llama-server', () => {
  let s: RealLlama
  beforeAll(async () => {
    s = await startLlama(['--parallel', '1'])
    await healthIs(s, 200)
  }, 60_000)
  afterAll(() => s?.stop())

  const args = (knob: string, extra: readonly string[]) => [
    ...['--svc', 'tiny', '--engine', 'llama.cpp', '--runtime', 'process', '--host', 'local', '--base-url', s.baseUrl],
    ...['--knob', knob, '--ledger-cmd', `cat ${s.logFile}`, '--host-timeout', '10s', '--health-budget', '10s'],
    ...extra,
  ]

  test('--parallel 1 running, PARALLEL=2 the only change: ready (exit 0)', async () => {
    const dir = gitCheckout({ 'tiny.env': 'PARALLEL=2\n' })
    const r = await preflightInProcess(args('PARALLEL', ['--value', '2', '--previous', '1', '--checkout', dir, '--env-file', 'tiny.env']))
    expect(r.exitCode, r.stdout + r.stderr).toBe(0)
    const verdicts = Object.fromEntries(r.report!.steps.map((x) => [x.id, x.verdict]))
    // No unit stands for a bare process without --unit: the drop-in gate is skipped, saying why.
    expect(verdicts).toEqual(Object.fromEntries(PREFLIGHT_STEP_IDS.map((id) => [id, id === 'preflight.dropins' ? 'skipped' : 'passed'])))
    expect(r.report!.steps.find((x) => x.id === 'preflight.help')!.observed).toMatch(/^listed: -np, --parallel N /)
    expect(r.report!.steps.find((x) => x.id === 'preflight.previous')!.observed).toMatch(/n_slots=1/)
  }, 60_000)

  test("the env file arming it through llama.cpp's own env twin (LLAMA_ARG_N_PARALLEL=2) alone: ready; both set apart: red", async () => {
    const twin = gitCheckout({ 'tiny.env': 'LLAMA_ARG_N_PARALLEL=2\n' })
    const r = await preflightInProcess(args('PARALLEL', ['--value', '2', '--previous', '1', '--checkout', twin, '--env-file', 'tiny.env']))
    expect(r.exitCode, r.stdout + r.stderr).toBe(0)
    expect(r.report!.steps.find((x) => x.id === 'preflight.env-file')!.observed).toMatch(
      /^tiny\.env: LLAMA_ARG_N_PARALLEL="2" \(unset now\)/,
    )
    const apart = gitCheckout({ 'tiny.env': 'PARALLEL=2\nLLAMA_ARG_N_PARALLEL=3\n' })
    const red = await preflightInProcess(
      args('PARALLEL', ['--value', '2', '--previous', '1', '--checkout', apart, '--env-file', 'tiny.env']),
    )
    expect(red.exitCode, red.stdout).toBe(1)
    expect(red.report!.steps.find((x) => x.id === 'preflight.env-file')!.observed).toMatch(
      /LLAMA_ARG_N_PARALLEL="3" in tiny\.env \(line 2\), not 2/,
    )
  }, 60_000)

  test('a misspelt flag (--paralel in a --catalog): the real --help does not define it, red (exit 1)', async () => {
    const catalog = join(tempDir('armproof-catalog-'), 'misspelt.yaml')
    writeFileSync(
      catalog,
      "knobs:\n  PARALEL:\n    env: PARALLEL\n    flag: --paralel\n    type: int\n    min: 1\n    default: '1'\n    passed-only-when-non-default: false\n    sources: { slots: n_slots }\n    summary: misspelt\n",
    )
    const r = await preflightInProcess(
      args('PARALEL', ['--catalog', catalog, '--value', '2', '--previous', '1', '--checkout', gitCheckout({})]),
    )
    expect(r.exitCode, r.stdout + r.stderr).toBe(1)
    const help = r.report!.steps.find((x) => x.id === 'preflight.help')!
    expect(help.verdict).toBe('failed')
    expect(help.observed).toMatch(/does not define --paralel/)
  }, 60_000)
})
