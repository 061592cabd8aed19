// The conventions armproof shares with its neighbours (hurl, k6, vitest): one version line on
// every command (--version, -V), commands named as the process was started (never a hard-coded
// `pnpm …` in a message), colour as --color/--no-color, FORCE_COLOR, a non-empty NO_COLOR and
// TERM=dumb say, --json with the report alone on stdout, a closing line with the step counts and
// the duration, and a progress line that ticks by time on a terminal.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { execa } from 'execa'
import { afterEach, describe, expect, test, vi } from 'vitest'
import pkg from '../../package.json' with { type: 'json' }
import { colorChoice, paints } from '../../helpers/cli/color.ts'
import { command, launcherOf, VERSION_TEXT } from '../../helpers/config/invocation.ts'
import { formatDuration, parseShownDuration } from '../../helpers/config/duration.ts'
import { closingLine, countSteps, reportClosingLine } from '../../helpers/report/closing.ts'
import { advanced, LiveLine, TICK_MS } from '../../helpers/report/live-line.ts'
import { STEP_IDS } from '../../helpers/steps/registry.ts'
import type { Report } from '../../helpers/report/json.ts'
import type { FleetReport } from '../../helpers/fleet/report.ts'
import { prng } from '../support/prng.ts'
import { checkedFleetReport, checkedReport } from '../support/report-schema.ts'
import { ROOT, verifyCommand } from '../support/run-verify.ts'
import { DEMO_ARM } from '../support/demo-args.ts'
import { tempDir } from '../support/temp-dir.ts'

/**
 * `node <bin> args…` from the checkout root, as CI runs it (no terminal, no .env); bin/verify.ts
 * on a verify host where the run can go to one (test/support/run-verify.ts, the same output).
 */
const bin = (file: string, args: readonly string[], env: Record<string, string> = {}) => {
  const ci = { CI: 'true', VERIFY_NO_DOTENV: '1', ...env }
  return file === 'bin/verify.ts'
    ? verifyCommand(args, ci)
    : execa(process.execPath, [join(ROOT, file), ...args], { cwd: ROOT, reject: false, stdin: 'ignore', env: ci })
}

/** The command each thin bin calls (bin/<name>.ts: its argv, env, cwd and streams handed to it), by bin. */
const COMMANDS: Record<string, () => Promise<(io: CommandIo) => Promise<number>>> = {
  'bin/verify.ts': async () => (await import('../../helpers/cli/verify.ts')).verify,
  'bin/writeback.ts': async () => (await import('../../helpers/writeback/command.ts')).writeback,
  'bin/preflight.ts': async () => (await import('../../helpers/cli/preflight.ts')).preflight,
  'bin/merge-reports.ts': async () => (await import('../../helpers/fleet/merge.ts')).mergeReports,
  'bin/serve.ts': async () => (await import('../../helpers/serve/command.ts')).serve,
  'bin/effect.ts': async () => (await import('../../helpers/effect/command.ts')).effect,
}
type CommandIo = { rawArgs: readonly string[]; env: Record<string, string | undefined>; cwd: string; out: Sink; err: Sink }
type Sink = { write(text: string): boolean }

/**
 * As `bin`, in this process: the command `file` calls, with the same argv and env and its output
 * collected (no Node start); a bin with no such command (bin/armproof.ts, bin/demo.ts) runs as a process.
 */
async function inProcess(file: string, args: readonly string[], env: Record<string, string> = {}) {
  const command = COMMANDS[file]
  if (!command) return bin(file, args, env)
  let stdout = ''
  let stderr = ''
  const exitCode = await (await command())({
    rawArgs: args,
    env: { ...process.env, CI: 'true', VERIFY_NO_DOTENV: '1', ...env },
    cwd: ROOT,
    out: { write: (t) => ((stdout += t), true) },
    err: { write: (t) => ((stderr += t), true) },
  })
  return { exitCode, stdout: stdout.replace(/\n$/, ''), stderr: stderr.replace(/\n$/, '') }
}

const REPLAY = [...DEMO_ARM, '--mode', 'replay']
const ESC = '\x1b['

/** `node bin/verify.ts` on the green demo recording, plain (no flag, no colour env): one process for the tests that read that run. */
let plainGreen: ReturnType<typeof bin> | undefined
const greenReplay = () => (plainGreen ??= bin('bin/verify.ts', REPLAY))

describe('--version and -V: one line, the same on every command', () => {
  test('the text is armproof and the package version', () => {
    expect(VERSION_TEXT).toBe(`armproof ${pkg.version}`)
  })

  test.concurrent.each([
    ['bin/armproof.ts', []],
    ['bin/verify.ts', []],
    ['bin/verify.ts', ['--svc', 'x']],
    ['bin/writeback.ts', []],
    ['bin/preflight.ts', []],
    ['bin/preflight.ts', ['--svc', 'x']],
    ['bin/merge-reports.ts', []],
    ['bin/demo.ts', []],
    ['bin/serve.ts', []],
    ['bin/effect.ts', []],
    ['bin/effect.ts', ['--svc', 'x']],
  ] as const)('%s %j: --version and -V print it alone on stdout, exit 0, before anything else runs', async (file, before) => {
    // --version through the bin's own process; -V through the command it calls, in this process (the same answer, no Node start).
    for (const [flag, run] of [
      ['--version', bin],
      ['-V', inProcess],
    ] as const) {
      const r = await run(file, [...before, flag])
      expect(r.exitCode, `${file} ${flag}: ${String(r.stderr)}`).toBe(0)
      expect(String(r.stdout)).toBe(VERSION_TEXT)
      expect(String(r.stderr)).toBe('')
    }
  })
})

describe('commands are named as the process was started', () => {
  test('the installed bin, a package script, a bin called straight, an in-process caller', () => {
    expect(launcherOf('/usr/local/bin/armproof', {})).toBe('armproof')
    expect(launcherOf('/opt/x/node_modules/armproof/bin/armproof.mjs', { npm_lifecycle_event: 'test' })).toBe('armproof')
    // A run the installed `armproof serve` started: the package's built verify, the installed command's.
    expect(launcherOf('/opt/x/node_modules/armproof/dist/bin/verify.js', { npm_lifecycle_event: 'serve' })).toBe('armproof')
    expect(launcherOf('/src/armproof/bin/verify.ts', { npm_lifecycle_event: 'verify' })).toBe('pnpm')
    expect(launcherOf('/src/armproof/bin/demo.ts', { npm_lifecycle_event: 'demo' })).toBe('pnpm')
    // An outer `pnpm test` leaks npm_lifecycle_event=test into a bin it starts: that bin was called straight.
    expect(launcherOf('/src/armproof/bin/verify.ts', { npm_lifecycle_event: 'test' })).toBe('node')
    expect(launcherOf('/src/armproof/bin/writeback.ts', {})).toBe('node')
    expect(launcherOf('/src/armproof/node_modules/vitest/vitest.mjs', {})).toBe('pnpm')
    expect(launcherOf(undefined, {})).toBe('pnpm')
    // bootstrap.sh names the script it ran; a bin that script starts in turn was called straight.
    expect(launcherOf('/src/armproof/bin/demo.ts', { ARMPROOF_LAUNCHER: 'bootstrap:demo' })).toBe('bootstrap')
    expect(launcherOf('/src/armproof/bin/verify.ts', { ARMPROOF_LAUNCHER: 'bootstrap:test', npm_lifecycle_event: 'test' })).toBe('node')
    expect(command('writeback', 'bootstrap')).toBe('sh bootstrap.sh writeback')
    expect([command('writeback', 'armproof'), command('writeback', 'pnpm'), command('writeback', 'node')]).toEqual([
      'armproof writeback',
      'pnpm writeback',
      'node bin/writeback.ts',
    ])
  })

  test('a bin called straight names itself in its usage and its next step, never pnpm', async () => {
    const help = await bin('bin/verify.ts', ['--help'])
    expect(String(help.stdout)).toMatch(/^Usage: node bin\/verify\.ts --svc <svc> --knob <knob> \[options\]$/m)
    const wb = await bin('bin/writeback.ts', ['--help'])
    expect(String(wb.stdout)).toMatch(/^Usage: node bin\/writeback\.ts --report <file>/m)
    for (const name of ['preflight', 'serve', 'effect', 'merge-reports', 'demo'] as const) {
      const help = await bin(`bin/${name}.ts`, ['--help'])
      expect(String(help.stdout), name).toMatch(new RegExp(`^Usage: node bin/${name}\\.ts `, 'm'))
      expect(String(help.stdout), name).not.toMatch(/\bpnpm (verify|preflight|writeback|merge-reports|demo|serve|effect)\b/)
    }
    const green = await greenReplay()
    expect(green.exitCode, String(green.stderr)).toBe(0)
    expect(String(green.stdout)).toMatch(/^GREEN · .* · next: node bin\/writeback\.ts --report <report\.json> --vault <dir> · /m)
    expect(String(green.stdout) + String(green.stderr)).not.toMatch(/\bpnpm (verify|writeback|merge-reports|demo)\b/)
  })

  test('no product message writes a launcher itself: every `pnpm <command>` goes through command()', () => {
    const files = ['bin', 'helpers', 'suites'].flatMap((d) =>
      readdirSync(join(ROOT, d), { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile() && e.name.endsWith('.ts'))
        .map((e) => join(e.parentPath, e.name)),
    )
    expect(files.length).toBeGreaterThan(60)
    const found: string[] = []
    for (const file of files) {
      // Comments may name the checkout's commands; the code's strings may not.
      const code = readFileSync(file, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '')
        .replace(/\s\/\/ .*$/gm, '')
      // `armproof writeback: refused …` is the program naming itself, not a command to type.
      for (const m of code.matchAll(/\b(?:pnpm|armproof) (?:verify|preflight|writeback|merge-reports|demo|effect|serve)\b(?!:)/g))
        found.push(`${relative(ROOT, file)}: ${m[0]}`)
    }
    expect(found).toEqual([])
  })
})

describe("the README's commands end without pnpm's ELIFECYCLE line", () => {
  test('no command line it shows runs a package script through pnpm (pnpm 12 ends a failing one with [ELIFECYCLE]; bootstrap.sh and the bins do not)', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    const blocks = [...readme.matchAll(/^```(?:sh|bash)?\n([\s\S]*?)^```/gm)].map((m) => m[1]!)
    const lines = blocks.flatMap((b) => b.split('\n')).filter((l) => /^(?:sh|node|pnpm|armproof|npm|podman) /.test(l))
    expect(lines.length).toBeGreaterThan(5)
    const scripts = Object.keys(pkg.scripts)
    const throughPnpm = lines.filter((l) =>
      scripts.some((s) => l.startsWith(`pnpm ${s} `) || l === `pnpm ${s}` || l.startsWith(`pnpm run ${s}`)),
    )
    // `pnpm pack` is pnpm's own command, not a script of ours.
    expect(throughPnpm).toEqual([])
    expect(lines.slice(0, 2)).toEqual([expect.stringMatching(/^sh bootstrap\.sh demo /), expect.stringMatching(/^sh bootstrap\.sh test /)])
  })
})

describe('colour', () => {
  const tty = { isTTY: true }
  const pipe = { isTTY: false }
  test('flags, then FORCE_COLOR, then a non-empty NO_COLOR, then TERM=dumb, then whether it is a terminal (never under CI)', () => {
    const on = (flag: boolean | undefined, env: Record<string, string>, stream: { isTTY: boolean }) =>
      paints(colorChoice(flag, env), stream, env)
    expect(on(undefined, {}, tty)).toBe(true)
    expect(on(undefined, {}, pipe)).toBe(false)
    expect(on(undefined, { CI: 'true' }, tty)).toBe(false)
    expect(on(undefined, { FORCE_COLOR: '1' }, pipe)).toBe(true)
    expect(on(undefined, { FORCE_COLOR: '3', CI: 'true' }, pipe)).toBe(true)
    expect(on(undefined, { FORCE_COLOR: '0' }, tty)).toBe(false)
    expect(on(undefined, { FORCE_COLOR: 'false' }, tty)).toBe(false)
    expect(on(undefined, { FORCE_COLOR: '' }, pipe)).toBe(false)
    expect(on(undefined, { NO_COLOR: '1' }, tty)).toBe(false)
    expect(on(undefined, { NO_COLOR: 'anything' }, tty)).toBe(false)
    // An empty NO_COLOR= is unset (no-color.org): the terminal still gets colour.
    expect(on(undefined, { NO_COLOR: '' }, tty)).toBe(true)
    expect(on(undefined, { TERM: 'dumb' }, tty)).toBe(false)
    expect(on(undefined, { TERM: 'xterm-256color' }, tty)).toBe(true)
    expect(on(undefined, { FORCE_COLOR: '1', NO_COLOR: '1' }, pipe)).toBe(true)
    expect(on(true, { NO_COLOR: '1', TERM: 'dumb', CI: 'true' }, pipe)).toBe(true)
    expect(on(false, { FORCE_COLOR: '1' }, tty)).toBe(false)
  })

  test.concurrent.each([
    [[], { FORCE_COLOR: '1' }, true],
    [[], { NO_COLOR: '' }, false],
    [['--color'], {}, true],
    [['--color'], { NO_COLOR: '1' }, true],
    [['--no-color'], { FORCE_COLOR: '1' }, false],
    [[], { FORCE_COLOR: '1', TERM: 'dumb' }, true],
    [['--color', '--no-color'], {}, false],
  ] as const)('a piped run with %j and %j is coloured: %s', async (flags, env, coloured) => {
    const r = await bin('bin/verify.ts', [...REPLAY, ...flags], env)
    expect(r.exitCode, String(r.stderr)).toBe(0)
    expect(String(r.stdout).includes(ESC)).toBe(coloured)
    // Whatever the colour, the words are the same.
    expect(String(r.stdout).replace(/\x1b\[[0-9;]*m/g, '')).toMatch(/^GREEN · PREFILL_INTERLEAVE=1 proven on demo/m)
  })
})

describe('--json: the report alone on stdout', () => {
  test('one target: stdout is one JSON document, the report; the runbook goes to stderr', async () => {
    const r = await bin('bin/verify.ts', [...REPLAY, '--json'])
    expect(r.exitCode, String(r.stderr)).toBe(0)
    const report = checkedReport(JSON.parse(String(r.stdout)) as Report)
    expect([report.format, report.svc, report.verdict, report.steps.length]).toEqual(['armproof-report/1', 'demo', 'green', 10])
    expect(String(r.stderr)).toMatch(/^GREEN · PREFILL_INTERLEAVE=1 proven on demo/m)
    expect(String(r.stderr)).toMatch(/^ 9 ✓ meter /m)
  })

  test('VERIFY_JSON=1 is its env twin; a VERIFY_JSON that is no yes/no word is exit 2 before anything', async () => {
    const r = await bin('bin/verify.ts', REPLAY, { VERIFY_JSON: '1' })
    expect(checkedReport(JSON.parse(String(r.stdout)) as Report).verdict).toBe('green')
    const bad = await inProcess('bin/verify.ts', REPLAY, { VERIFY_JSON: 'loud' })
    expect(bad.exitCode).toBe(2)
    expect(String(bad.stdout)).toBe('')
    expect(String(bad.stderr)).toContain('VERIFY_JSON: "loud" is not a yes/no word')
  })

  test('a red run still writes its report to stdout, and the exit code says red', async () => {
    const r = await bin('bin/verify.ts', [
      '--svc',
      'demo-ignored',
      '--knob',
      'PREFILL_INTERLEAVE',
      '--value',
      '1',
      '--mode',
      'replay',
      '--json',
    ])
    expect(r.exitCode).toBe(1)
    const report = checkedReport(JSON.parse(String(r.stdout)) as Report)
    expect(report.verdict).toBe('red')
    expect(report.steps.find((s) => s.id === 'meter')?.verdict).toBe('failed')
  })
})

describe('the closing line: step counts and the duration', () => {
  const step = (verdict: 'passed' | 'failed' | 'inconclusive' | 'skipped') => ({ verdict }) as never
  test('counts every verdict, and the steps never judged', () => {
    expect(countSteps([{ steps: [step('passed'), step('failed'), step('skipped')] }])).toEqual({
      passed: 1,
      failed: 1,
      inconclusive: 0,
      skipped: 1,
      notJudged: STEP_IDS.length - 3,
    })
    expect(closingLine({ passed: 8, failed: 1, inconclusive: 0, skipped: 0, notJudged: 0 }, 4100)).toBe(
      'steps: 8 passed, 1 failed, 0 inconclusive, 0 skipped · 4.1s',
    )
    expect(closingLine({ passed: 3, failed: 0, inconclusive: 0, skipped: 0, notJudged: 6 }, 61_000)).toBe(
      'steps: 3 passed, 0 failed, 0 inconclusive, 0 skipped, 6 not judged · 1m 01s',
    )
    expect(reportClosingLine({ steps: [], startedAt: '2026-01-01T00:00:00.000Z', finishedAt: '2026-01-01T00:00:00.250Z' })).toBe(
      `steps: 0 passed, 0 failed, 0 inconclusive, 0 skipped, ${STEP_IDS.length} not judged · 250ms`,
    )
    const painted = closingLine({ passed: 1, failed: 1, inconclusive: 0, skipped: 0, notJudged: 0 }, 1, { color: true })
    expect(painted).toContain(`${ESC}32m1 passed`)
    expect(painted).toContain(`${ESC}31m1 failed`)
    expect(painted).not.toContain(`${ESC}33m0 inconclusive`)
  })

  test('is the last line of a run, green or red', async () => {
    const green = await greenReplay()
    // No earlier record of the service: the one-flag law's step is skipped on purpose.
    expect(String(green.stdout).trimEnd().split('\n').at(-1)).toMatch(/^steps: 9 passed, 0 failed, 0 inconclusive, 1 skipped · \d/)
    const red = await bin('bin/verify.ts', ['--svc', 'demo-ignored', '--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--mode', 'replay'])
    expect(String(red.stdout).trimEnd().split('\n').at(-1)).toMatch(/^steps: 8 passed, 1 failed, 0 inconclusive, 1 skipped · \d/)
  })
})

describe('the progress line ticks by time on a terminal', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  test('between two reports of a wait, the elapsed part moves on every second, never past its budget, and stops when cleared', () => {
    vi.useFakeTimers()
    const writes: string[] = []
    let now = 0
    const line = new LiveLine({ write: (t) => writes.push(t), width: 200, now: () => now })
    line.show('waiting for http://gpu-7:8000/health: connection refused (loading) · 1ms of 20s')
    expect(writes.at(-1)).toMatch(/ 1ms of 20s$/)
    for (const [at, shown] of [
      [1000, '1.0s'],
      [2000, '2.0s'],
      [11_000, '11s'],
      [25_000, '20s'],
    ] as const) {
      now = at
      vi.advanceTimersByTime(TICK_MS)
      expect(writes.at(-1), `at ${at} ms`).toMatch(new RegExp(` ${shown.replace('.', '\\.')} of 20s$`))
    }
    // Each redraw turns the spinner: a wait never looks frozen.
    expect(new Set(writes.map((w) => w.slice(0, 7))).size).toBeGreaterThan(3)
    line.clear()
    const after = writes.length
    expect(writes.at(-1)).toBe('\r\x1b[K')
    vi.advanceTimersByTime(10 * TICK_MS)
    expect(writes.length).toBe(after)
  })

  test('a new report restarts from its own elapsed; the heartbeat\'s "of up to" is advanced too; a message without one is left as it is', () => {
    expect(advanced('meter: waiting · 5.0s of up to 2m 00s', 3000)).toBe('meter: waiting · 8.0s of up to 2m 00s')
    expect(advanced('watching m = 0 · 59s of 5m 00s · 3 requests since the start', 2000)).toBe(
      'watching m = 0 · 1m 01s of 5m 00s · 3 requests since the start',
    )
    expect(advanced('GET http://h/v1/chat: HTTP 503, retrying after 2.0s (Retry-After 2)', 5000)).toBe(
      'GET http://h/v1/chat: HTTP 503, retrying after 2.0s (Retry-After 2)',
    )
  })

  test('formatDuration is read back to what it showed, over random durations (seeded); a moved elapsed never passes its budget', () => {
    const random = prng(26)
    const budget = formatDuration(3_600_000)
    for (let i = 0; i < 3000; i++) {
      const ms = random() * 3_600_000 * (random() < 0.3 ? 0.003 : 1)
      const shown = formatDuration(ms)
      const back = parseShownDuration(shown)
      expect(back, shown).toBeDefined()
      // Within what the text rounds away: 0.5 ms, 50 ms under 10 s, half a second above.
      expect(Math.abs(back! - ms), shown).toBeLessThanOrEqual(ms < 1000 ? 0.5 : ms < 10_000 ? 50 : 500)
      expect(shown, `${ms} ms`).not.toMatch(/m 60s$/)
      const by = random() * 7_200_000
      const moved = parseShownDuration(/x · (.+) of /.exec(advanced(`x · ${shown} of ${budget}`, by))![1]!)!
      expect(moved).toBeLessThanOrEqual(3_600_000)
      expect(moved).toBeGreaterThanOrEqual(Math.min(back!, 3_600_000))
    }
    for (const bad of ['', '5', '1.25s', '4m 5s', 'ms', '-1s']) expect(parseShownDuration(bad), bad).toBeUndefined()
  })
})

describe('fleet runs follow the same conventions', () => {
  test("--json puts the fleet report alone on stdout; the closing line counts every target's steps", async () => {
    const targets = join(tempDir('armproof-conv-'), 'targets.yaml')
    writeFileSync(
      targets,
      `defaults:\n  knob: PREFILL_INTERLEAVE\n  value: 1\ntargets:\n  - svc: demo\n    fixtures: ${join(ROOT, 'fixtures/demo/PREFILL_INTERLEAVE')}\n  - svc: demo-ignored\n    fixtures: ${join(ROOT, 'fixtures/demo-ignored/PREFILL_INTERLEAVE')}\n`,
    )
    const r = await bin('bin/verify.ts', ['--targets', targets, '--mode', 'replay', '--json'])
    expect(r.exitCode, String(r.stderr)).toBe(1)
    const fleet = checkedFleetReport(JSON.parse(String(r.stdout)) as FleetReport)
    expect([fleet.format, fleet.verdict, fleet.targets.map((t) => `${t.name} ${t.report.verdict} ${t.report.format}`)]).toEqual([
      'armproof-fleet/1',
      'red',
      ['demo green armproof-report/1', 'demo-ignored red armproof-report/1'],
    ])
    expect(String(r.stderr).trimEnd().split('\n').at(-1)).toMatch(
      /^2 target\(s\), steps: 17 passed, 1 failed, 0 inconclusive, 2 skipped · \d/,
    )
    expect(String(r.stderr)).toMatch(/^next for the green targets: node bin\/writeback\.ts --report <report\.json> --vault <dir>$/m)
    // merge-reports --json: the merged report alone on stdout (a run without shards is its one shard), its lines on stderr.
    const shard = join(targets, '..', 'fleet.json')
    writeFileSync(shard, String(r.stdout))
    const merged = await bin('bin/merge-reports.ts', ['--json', shard])
    expect(merged.exitCode, String(merged.stderr)).toBe(1)
    expect(checkedFleetReport(JSON.parse(String(merged.stdout)) as FleetReport).targets.map((t) => t.report.verdict)).toEqual([
      'green',
      'red',
    ])
    expect(String(merged.stderr)).toMatch(/^merged 1 shard report\(s\) into stdout: fleet RED, 2 target\(s\), exit 1$/m)
    const refused = await bin('bin/merge-reports.ts', [shard])
    expect([refused.exitCode, String(refused.stdout)]).toEqual([2, ''])
    expect(String(refused.stderr)).toContain('--out <merged.json> (or --json) is required')
    expect(String(refused.stderr)).toMatch(/^Usage: node bin\/merge-reports\.ts /m)
  })
})
