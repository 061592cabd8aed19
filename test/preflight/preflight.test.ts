// `armproof preflight` end to end against the reference engine (engine/launch.ts), as an operator
// runs it before typing deploy.sh: ready when every check holds; each mistake the runbook's first
// section warns of red with its next step (a misspelt flag, an illegal enum, a value out of the
// catalog's bounds, --previous not what the engine runs, nothing to arm, a drop-in, an env file
// that changes a second variable); the operator's configuration mistakes exit 2 with nothing contacted.
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { execa } from 'execa'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startEngine, type EngineHandle } from '../../engine/launch.ts'
import { PREFLIGHT_STEP_IDS } from '../../helpers/steps/preflight/registry.ts'
import { writeback } from '../../helpers/writeback/command.ts'
import { gitCheckout } from '../support/git-checkout.ts'
import { preflightEngineArgs, preflightInProcess, type PreflightRun } from '../support/preflight-in-process.ts'
import { tempDir } from '../support/temp-dir.ts'
import { checkedReport } from '../support/report-schema.ts'
import { ROOT } from '../support/run-verify.ts'
import type { PreflightReport } from '../../helpers/report/preflight.ts'

const SECRET = 'hf_preflight_secret_6e1d'
const OTHER_SECRET = 'hf_preflight_other_91c2'
/** What the engine runs with now, besides the test process's own environment. */
const RUNNING = { PREFILL_INTERLEAVE: '0', MODEL_DIR: '/models/a', HF_TOKEN: SECRET }
const ARM = ['--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--previous', '0']

const step = (run: PreflightRun, id: string) => run.report?.steps.find((s) => s.id === id)

describe.concurrent('armproof preflight against the reference engine', () => {
  let engine: EngineHandle
  let benched: EngineHandle
  beforeAll(async () => {
    ;[engine, benched] = await Promise.all([
      startEngine({ svc: 'pf-main', processName: 'rpf-main', engineEnv: RUNNING }),
      startEngine({ svc: 'pf-bench', processName: 'rpf-bench', dropins: ['/etc/systemd/system/pf-bench.service.d/bench.conf'] }),
    ])
  })
  afterAll(() => Promise.all([engine?.stop(), benched?.stop()]))

  const run = (args: readonly string[], on: EngineHandle = engine) =>
    preflightInProcess([...preflightEngineArgs(on), ...args], { engine: on })
  /** A checkout on main holding the service's env file as given. */
  const checkout = (env: string) => gitCheckout({ 'deploy.sh': 'exec podman-compose up -d\n', 'env/pf-main.env': env })

  test("ready: every check holds, one line each, the report in verify's format with preflight's ids (exit 0)", async () => {
    const dir = checkout('# pf-main\nPREFILL_INTERLEAVE=1\nMODEL_DIR=/models/a\nHF_TOKEN=' + SECRET + '\n')
    const r = await run([...ARM, '--checkout', dir, '--env-file', 'env/pf-main.env'])
    expect(r.exitCode, r.stdout + r.stderr).toBe(0)
    expect(r.report!.format).toBe('armproof-report/1')
    expect(r.report!.verdict).toBe('green')
    expect(r.report!.steps.map((s) => [s.id, s.verdict])).toEqual(PREFLIGHT_STEP_IDS.map((id) => [id, 'passed']))
    for (const id of PREFLIGHT_STEP_IDS) expect(r.stdout).toMatch(new RegExp(`✓ ${id.replace('.', '\\.')}`))
    expect(r.stdout).toMatch(
      /^READY to deploy · PREFILL_INTERLEAVE 0 → 1 on pf-main: every check held · after the deploy: pnpm verify --svc pf-main --knob PREFILL_INTERLEAVE --value 1 --previous 0 · rollback: PREFILL_INTERLEAVE=0 then redeploy --service pf-main /m,
    )
    expect(step(r, 'preflight.env-file')!.observed).toMatch(
      /PREFILL_INTERLEAVE="1" \("0" now\); the other 2 variables it sets equal the engine's/,
    )
    // The engine's secret never reaches the output or the report, though its environment was read whole.
    expect(r.stdout + r.stderr + JSON.stringify(r.report)).not.toContain(SECRET)
    // A ready preflight proves nothing about an arm: writeback refuses its report (its steps are not verify's).
    const vault = tempDir('armproof-pf-vault-')
    writeFileSync(join(vault, 'pf-main.md'), '---\nservice: pf-main\n---\n# pf-main\n')
    const err = { text: '', write: (t: string) => ((err.text += t), true) }
    const wb = await writeback({ rawArgs: ['--report', r.reportPath, '--vault', vault], env: {}, cwd: vault, out: err, err })
    expect(wb, err.text).toBe(2)
    expect(err.text).toMatch(/^armproof writeback: refused .*the vault was not changed/m)
    expect(err.text).toMatch(/is not an armproof report: missing or malformed steps/)
  })

  test('--json: the report alone on stdout, every line on stderr', async () => {
    const r = await run([...ARM, '--checkout', checkout('PREFILL_INTERLEAVE=1\n'), '--json'])
    expect(r.exitCode, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual(r.report)
    expect(r.stderr).toMatch(/^READY to deploy/m)
  })

  test('a --base-url port nothing on --host serves: refused on first contact (exit 2), the port the engine listens on named', async () => {
    const args = preflightEngineArgs(engine).map((a) => (a === engine.baseUrl ? 'http://127.0.0.1:9' : a))
    const r = await preflightInProcess([...args, ...ARM, '--checkout', checkout('')], { engine })
    expect(r.exitCode, r.stdout + r.stderr).toBe(2)
    expect(r.stderr).toMatch(new RegExp(`did you mean --base-url http://127\\.0\\.0\\.1:${engine.port}\\?`))
    expect(r.report!.verdict).toBe('error')
    expect(r.report!.steps).toEqual([])
    expect(r.stdout).toMatch(/^ERROR · first contact: /m)
  })

  test('without --env-file that check is skipped, saying so, and the run is still ready', async () => {
    const r = await run([...ARM, '--checkout', checkout('PREFILL_INTERLEAVE=1\n')])
    expect(r.exitCode, r.stdout).toBe(0)
    const s = step(r, 'preflight.env-file')!
    expect([s.verdict, s.intendedSkip, s.observed]).toEqual(['skipped', true, 'not checked: no --env-file (PREFLIGHT_ENV_FILE) was given'])
  })

  test('a flag the running build does not define (a misspelt flag in a --catalog): red at preflight.help, do not deploy (exit 1)', async () => {
    const dir = tempDir('armproof-catalog-')
    const catalog = join(dir, 'misspelt.yaml')
    writeFileSync(
      catalog,
      'knobs:\n  PREFIL_INTERLEAVE:\n    env: PREFILL_INTERLEAVE\n    flag: --prefil-interleave\n    type: int\n    min: 0\n    default: 0\n    passed-only-when-non-default: true\n    meter: { name: "radiance:engine_steps_held_total" }\n    summary: misspelt\n',
    )
    const r = await run([
      '--catalog',
      catalog,
      '--knob',
      'PREFIL_INTERLEAVE',
      '--value',
      '1',
      '--previous',
      '0',
      '--checkout',
      checkout(''),
    ])
    expect(r.exitCode, r.stdout).toBe(1)
    const help = step(r, 'preflight.help')!
    expect(help.verdict).toBe('failed')
    expect(help.observed).toMatch(/does not define --prefil-interleave/)
    expect(help.next).toMatch(/^do not deploy: this build does not have the knob/)
    expect(r.stdout).toMatch(/^NOT READY: do not deploy · .*failed: preflight\.help/m)
    // What the engine runs is not judged for a flag its build lacks; the engine is still read for the env file.
    expect(step(r, 'preflight.previous')!.verdict).toBe('skipped')
  })

  test('an enum value --help does not list: red at preflight.value, naming the choices (exit 1, not a refusal)', async () => {
    const r = await run(['--knob', 'CHECKPOINT_POLICY', '--value', 'bogus', '--checkout', checkout('')])
    expect(r.exitCode, r.stdout + r.stderr).toBe(1)
    const v = step(r, 'preflight.value')!
    expect(v.verdict).toBe('failed')
    expect(v.observed).toMatch(/--value "bogus" is not a choice; the running build lists \{/)
    expect(v.next).toMatch(/config_parse refuses bogus at boot/)
    expect(step(r, 'preflight.help')!.verdict).toBe('passed')
  })

  test("a value below the catalog's bound: red at preflight.value (exit 1)", async () => {
    const r = await run(['--knob', 'BUSY_PREFILL_CHUNK', '--value', '-5', '--checkout', checkout('')])
    expect(r.exitCode, r.stdout + r.stderr).toBe(1)
    const v = step(r, 'preflight.value')!
    expect(v.verdict).toBe('failed')
    expect(v.observed).toBe('--value "-5": must be a whole number ≥ 0 (tokens)')
  })

  test('a --value with shell syntax: refused as verify refuses it (exit 2), nothing run from it', async () => {
    const sentinel = join(tempDir('armproof-pf-hostile-'), 'sentinel')
    const hostile = `1$(touch ${sentinel})\`touch ${sentinel}\``
    const r = await run(['--knob', 'PREFILL_INTERLEAVE', '--value', hostile, '--previous', '0', '--checkout', checkout('')])
    expect(r.exitCode, r.stdout + r.stderr).toBe(2)
    expect(r.stderr).toMatch(/--value: .* holds characters no knob value has/)
    expect(existsSync(sentinel)).toBe(false)
  })

  test('--value the same as --previous: nothing to arm, red (exit 1)', async () => {
    const r = await run(['--knob', 'PREFILL_INTERLEAVE', '--value', '0', '--previous', '0', '--checkout', checkout('')])
    expect(r.exitCode, r.stdout + r.stderr).toBe(1)
    expect(step(r, 'preflight.value')!.observed).toMatch(/is --previous 0: the deploy would change nothing/)
  })

  test('--previous not what the engine runs: red at preflight.previous, next: give --previous what it runs (exit 1)', async () => {
    const r = await run(['--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--previous', '2', '--checkout', checkout('')])
    expect(r.exitCode, r.stdout).toBe(1)
    const p = step(r, 'preflight.previous')!
    expect(p.verdict).toBe('failed')
    expect(p.expected).toBe('the engine runs --previous 2 now (the rollback line restores it)')
    expect(p.observed).toMatch(/^argv: no --prefill-interleave in argv/)
    expect(p.next).toMatch(/^do not deploy yet: the engine does not run --previous 2 .* give --previous what it runs/)
  })

  test('a drop-in left on the unit: red at preflight.dropins, naming it (exit 1)', async () => {
    const r = await run([...ARM, '--checkout', checkout('')], benched)
    expect(r.exitCode, r.stdout).toBe(1)
    const d = step(r, 'preflight.dropins')!
    expect(d.verdict).toBe('failed')
    expect(d.observed).toBe('DropInPaths=/etc/systemd/system/pf-bench.service.d/bench.conf')
  })

  test('a checkout with an untracked file: red at preflight.checkout (exit 1)', async () => {
    const dir = checkout('PREFILL_INTERLEAVE=1\n')
    writeFileSync(join(dir, 'notes.txt'), 'x\n')
    const r = await run([...ARM, '--checkout', dir, '--env-file', 'env/pf-main.env'])
    expect(r.exitCode, r.stdout).toBe(1)
    expect(step(r, 'preflight.checkout')!.observed).toMatch(/1 untracked file: \?\? notes\.txt/)
  })

  test('an env file that changes two variables: red, each named with both values, a secret never shown (exit 1)', async () => {
    const dir = checkout(`PREFILL_INTERLEAVE=1\nMODEL_DIR=/models/b\nHF_TOKEN=${OTHER_SECRET}\n`)
    const r = await run([...ARM, '--checkout', dir, '--env-file', 'env/pf-main.env'])
    expect(r.exitCode, r.stdout).toBe(1)
    const e = step(r, 'preflight.env-file')!
    expect(e.verdict).toBe('failed')
    expect(e.observed).toContain(
      '2 other variables would change: MODEL_DIR: the engine runs "/models/a", the file sets "/models/b"; HF_TOKEN (secret: values not shown) differs',
    )
    expect(e.next).toMatch(/^do not deploy: one change per deploy .*ship MODEL_DIR, HF_TOKEN in a deploy of its own/)
    const said = r.stdout + r.stderr + JSON.stringify(r.report)
    expect(said).not.toContain(SECRET)
    expect(said).not.toContain(OTHER_SECRET)
  })

  test('SIGINT during a check (node bin/preflight.ts): the report so far, marked interrupted, exit 130, its host command ended', async () => {
    const dir = tempDir('armproof-pf-int-')
    const report = join(dir, 'report.json')
    const pidFile = join(dir, 'help.pid')
    // The help command hangs: its pid is kept, to show it ends with the run.
    const hang = `echo $$ > ${pidFile}; exec sleep 30`
    const child = execa(
      process.execPath,
      [
        join(ROOT, 'bin/preflight.ts'),
        ...preflightEngineArgs(engine),
        ...ARM,
        '--help-cmd',
        hang,
        '--checkout',
        checkout(''),
        '--report',
        report,
      ],
      {
        reject: false,
        env: { ...engine.env, CI: 'true', VERIFY_NO_DOTENV: '1' },
      },
    )
    const until = Date.now() + 20_000
    while (!existsSync(pidFile) && Date.now() < until) await new Promise((r) => setTimeout(r, 25))
    child.kill('SIGINT')
    const ended = await child
    expect(ended.exitCode, String(ended.stderr)).toBe(130)
    const written = checkedReport(JSON.parse(readFileSync(report, 'utf8')) as PreflightReport)
    expect([written.verdict, written.exitCode, written.steps]).toEqual(['interrupted', 130, []])
    expect(written.error).toBe('interrupted by SIGINT after 0 of 6 checks; the checks not listed were not made')
    expect(String(ended.stdout)).toMatch(/^INTERRUPTED · interrupted by SIGINT/m)
    // Its process group is ended as the run exits (by the spawner that started it, which sees its parent go): within 5 s.
    const pid = Number(readFileSync(pidFile, 'utf8'))
    const alive = () => {
      try {
        process.kill(pid, 0)
        return true
      } catch {
        return false
      }
    }
    const gone = Date.now() + 5000
    while (alive() && Date.now() < gone) await new Promise((r) => setTimeout(r, 25))
    expect(alive()).toBe(false)
  })

  test("an env file that does not set the knob's variable: red, the deploy would not arm it (exit 1)", async () => {
    const dir = checkout('MODEL_DIR=/models/a\n')
    const r = await run([...ARM, '--checkout', dir, '--env-file', 'env/pf-main.env'])
    expect(r.exitCode, r.stdout).toBe(1)
    expect(step(r, 'preflight.env-file')!.observed).toMatch(
      /^PREFILL_INTERLEAVE is not set in env\/pf-main\.env \("0" now\): the deploy would not arm 1/,
    )
  })

  test('an env file line the readers read differently (a quoted value): cannot tell, naming the line (exit 3)', async () => {
    const dir = checkout('PREFILL_INTERLEAVE="1"\n')
    const r = await run([...ARM, '--checkout', dir, '--env-file', 'env/pf-main.env'])
    expect(r.exitCode, r.stdout).toBe(3)
    expect(step(r, 'preflight.env-file')!.observed).toMatch(/line 1: a quoted value/)
    expect(r.stdout).toMatch(/^CANNOT TELL: do not deploy yet · 1 check could not tell: preflight\.env-file/m)
  })
})

describe.concurrent('armproof preflight refuses its configuration before contacting anything (exit 2)', () => {
  // Port 9 (discard) on loopback: nothing answers, and nothing is asked.
  const base = [
    '--svc',
    'pf',
    '--knob',
    'PREFILL_INTERLEAVE',
    '--value',
    '1',
    '--base-url',
    'http://127.0.0.1:9',
    '--help-cmd',
    'false',
    '--ledger-cmd',
    'false',
  ]
  test.each([
    [
      'an --env-file leaving the checkout',
      (dir: string) => ['--checkout', dir, '--env-file', '../elsewhere.env'],
      /--env-file: "..\/elsewhere.env" leaves the checkout/,
    ],
    [
      'an absolute --env-file',
      (dir: string) => ['--checkout', dir, '--env-file', '/etc/passwd'],
      /--env-file: "\/etc\/passwd" is absolute/,
    ],
    [
      'an --env-file linked out of the checkout',
      (dir: string) => {
        symlinkSync('/etc/hostname', join(dir, 'linked.env'))
        return ['--checkout', dir, '--env-file', 'linked.env']
      },
      /--env-file: "linked.env" leaves the checkout/,
    ],
    [
      'a --checkout that is no folder',
      (dir: string) => ['--checkout', join(dir, 'missing')],
      /--checkout: ".*missing" is not a folder \(no such file or folder\)/,
    ],
    [
      "one of verify's options preflight has no use for",
      (dir: string) => ['--checkout', dir, '--meter-window', '5m'],
      /unknown option "--meter-window"/,
    ],
    ['a hostile --svc', (dir: string) => ['--checkout', dir, '--svc', 'pf;touch /tmp/x'], /--svc: "pf;touch \/tmp\/x" must match/],
  ])('%s', async (_name, extra, message) => {
    const dir = tempDir('armproof-pf-config-')
    const r = await preflightInProcess([...base, ...extra(dir)])
    expect(r.exitCode, r.stdout + r.stderr).toBe(2)
    expect(r.stderr).toMatch(message)
    expect(r.stderr).toMatch(/nothing was contacted/)
    expect(r.stdout).toBe('')
    expect(r.report).toBeUndefined()
  })

  test("PREFLIGHT_CHECKOUT and PREFLIGHT_ENV_FILE are read as their flags, and VERIFY_REPORT is never preflight's", async () => {
    const dir = tempDir('armproof-pf-env-')
    const r = await preflightInProcess(base, {
      env: { PREFLIGHT_CHECKOUT: dir, PREFLIGHT_ENV_FILE: '../x.env', VERIFY_REPORT: join(dir, 'verify.json') },
    })
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/PREFLIGHT_ENV_FILE: "..\/x.env" leaves the checkout/)
  })
})
