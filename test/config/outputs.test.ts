// Output paths (--report, --junit, --fixtures of a recording, the step summary) are checked before
// anything is contacted: a directory, an unwritable place, or a path under a parent that cannot
// take it is refused with exit 2, one line each, no stack trace. A write that still fails after
// the run prints the verdict anyway and exits 4.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { outputProblem } from '../../helpers/config/outputs.ts'
import { EXIT_OUTPUT_UNWRITTEN } from '../../helpers/config/options.ts'
import { verify } from '../../helpers/cli/verify.ts'
import { ROOT } from '../support/run-verify.ts'
import { ReachedProofSteps } from '../support/verify-in-process.ts'
import { readCheckedReport } from '../support/report-schema.ts'
import { DEMO_ARM, DEMO_REPLAY } from '../support/demo-args.ts'

const dir = mkdtempSync(join(tmpdir(), 'armproof-outputs-'))
const aFile = join(dir, 'a-file')
writeFileSync(aFile, 'x')
mkdirSync(join(dir, 'a-dir'))
mkdirSync(join(dir, 'b-dir'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('outputProblem', () => {
  const check = (path: string, kind: 'file' | 'folder' = 'file', append = false) =>
    outputProblem({ option: '--report', path, kind, append }, dir)
  test.each([
    ['a new file in an existing folder', 'new.json'],
    ['a new file under folders still to be made', 'reports/deep/new.json'],
    ['an existing file', 'a-file'],
  ])('%s can be written', (_name, path) => {
    expect(check(path)).toBeUndefined()
  })
  test.each([
    ['a directory', 'a-dir', /^--report: "a-dir" is a directory; give a file path/],
    ['a path under a file', 'a-file/report.json', /cannot be created: ".*a-file" is not a folder/],
    [
      'a path under a place that takes no new entry',
      '/proc/self/armproof/report.json',
      /^--report: "\/proc\/self\/armproof\/report.json" cannot be created under "\/proc\/self"/,
    ],
    ['a device for a whole-file write', '/dev/null', /is not a regular file/],
  ])('%s is refused in one line', (_name, path, message) => {
    const why = check(path)
    expect(why).toMatch(message)
    expect(why).not.toMatch(/\n/)
  })
  test('a fixtures folder that is a file is refused; a new one is fine', () => {
    expect(check('a-file', 'folder')).toMatch(/is not a folder/)
    expect(check('fixtures/new', 'folder')).toBeUndefined()
  })
  test('an appended file (the step summary) may be a device', () => {
    expect(check('/dev/null', 'file', true)).toBeUndefined()
  })
})

// The refusals end before the proof steps: the one of the output paths runs verify() in this
// process (a run that went on to the steps would throw), the .env one is bin/verify.ts itself (its
// own folder, its own stderr); the exit 4 comes after a replay's steps, through bin/verify.ts.
describe.concurrent('through pnpm verify', () => {
  let server: Server
  let connections = 0
  let port = 0
  beforeAll(async () => {
    server = createServer((socket) => {
      connections++
      socket.destroy()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as { port: number }).port
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  const verifyBin = (args: string[], env: Record<string, string> = {}) =>
    execa(process.execPath, [join(ROOT, 'bin/verify.ts'), ...args], {
      cwd: ROOT,
      reject: false,
      env: { CI: 'true', VERIFY_NO_DOTENV: '1', ...env },
      extendEnv: true,
      stdin: 'ignore',
    })

  test('unwritable --report, --junit, --fixtures and step summary: exit 2, one line each, nothing contacted, no stack trace', async ({
    expect,
  }) => {
    // As test/support/verify-in-process.ts, with the output paths under test in place of its own.
    const r = { exitCode: -1, stdout: '', stderr: '' }
    r.exitCode = await verify({
      rawArgs: [
        ...DEMO_ARM,
        '--base-url',
        `http://127.0.0.1:${port}`,
        '--mode',
        'record',
        '--report',
        join(dir, 'a-dir'),
        '--junit',
        '/proc/self/armproof/junit.xml',
        '--fixtures',
        aFile,
      ],
      env: { ...process.env, CI: 'true', VERIFY_NO_DOTENV: '1', GITHUB_STEP_SUMMARY: join(dir, 'b-dir') },
      cwd: ROOT,
      out: { write: (t: string) => (r.stdout += t) },
      err: { write: (t: string) => (r.stderr += t) },
      runSuites: () => Promise.reject(new ReachedProofSteps()),
    })
    expect(r.exitCode).toBe(2)
    const lines = String(r.stderr).trim().split('\n')
    expect(lines[0]).toBe('armproof: 4 configuration problems; nothing was contacted.')
    expect(lines.slice(1).map((l) => l.replace(/:.*/, ''))).toEqual([
      '  - --report',
      '  - --junit',
      '  - GITHUB_STEP_SUMMARY',
      '  - --fixtures',
    ])
    expect(String(r.stderr) + String(r.stdout)).not.toMatch(/\n\s+at /)
    expect(connections).toBe(0)
  })

  test('a .env that cannot be read is one line and exit 2, not a stack trace', async ({ expect }) => {
    const cwd = join(dir, 'with-env-dir')
    mkdirSync(join(cwd, '.env'), { recursive: true })
    const r = await execa(process.execPath, [join(ROOT, 'bin/verify.ts'), '--svc', 'demo', '--knob', 'PREFILL_INTERLEAVE'], {
      cwd,
      reject: false,
      env: { CI: 'true' },
      extendEnv: true,
      stdin: 'ignore',
    })
    expect(r.exitCode).toBe(2)
    expect(String(r.stderr).trim()).toBe(
      'armproof: 1 configuration problem; nothing was contacted.\n  - .env: cannot be read (EISDIR); fix it, or set VERIFY_NO_DOTENV=1',
    )
  })

  test('a write that still fails after the run: the verdict line is printed, exit 4, one line saying what was not written', async ({
    expect,
  }) => {
    const report = join(dir, 'replayed.json')
    const r = await verifyBin([...DEMO_REPLAY, '--report', report], { GITHUB_STEP_SUMMARY: '/dev/full' })
    expect(r.exitCode, String(r.stdout) + String(r.stderr)).toBe(EXIT_OUTPUT_UNWRITTEN)
    expect(String(r.stdout)).toMatch(/^GREEN · PREFILL_INTERLEAVE=1 proven on demo/m)
    expect(String(r.stderr)).toContain('armproof: could not write the step summary to /dev/full: ENOSPC')
    expect(String(r.stderr)).toContain('armproof: exit 4: the verdict above stands (green), but an output was not written')
    expect(String(r.stderr) + String(r.stdout)).not.toMatch(/\n\s+at /)
    expect(readCheckedReport(report).verdict).toBe('green')
  })
})
