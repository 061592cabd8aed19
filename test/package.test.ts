// armproof as an installed tool: `pnpm pack` (which builds dist/ through prepack), the tarball
// installed offline into an empty folder outside the checkout (from the local pnpm store: tests
// reach loopback only), then `armproof --help`, a green `armproof verify` against the reference
// engine and `armproof demo`, each run from an empty folder. Also: an old Node gets one line.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join, relative } from 'node:path'
import { execa } from 'execa'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startEngine, type EngineHandle } from '../engine/launch.ts'
import type { Report } from '../helpers/report/json.ts'
import { FAST, ROOT } from './support/run-verify.ts'
import { readCheckedReport } from './support/report-schema.ts'

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; packageManager: string; files: string[]; scripts: Record<string, string>; bin: Record<string, string> }
const work = mkdtempSync(join(tmpdir(), 'armproof-pkg-'))
const prefix = join(work, 'prefix')
const tarball = join(work, `armproof-${pkg.version}.tgz`)
const armproof = join(prefix, 'node_modules/.bin/armproof')
/** The same node as this test first on PATH: the installed command starts with `#!/usr/bin/env node`. */
const PATH = `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`

/** Runs the installed command from a fresh empty folder, as a user of the tool would. */
async function run(args: readonly string[], env: Record<string, string> = {}) {
  const cwd = mkdtempSync(join(work, 'cwd-'))
  const result = await execa(armproof, args, { cwd, reject: false, stdin: 'ignore', timeout: 90_000, env: { CI: 'true', VERIFY_NO_DOTENV: '1', PATH, ...env } })
  return { exitCode: result.exitCode, stdout: String(result.stdout), stderr: String(result.stderr), cwd }
}

beforeAll(async () => {
  mkdirSync(prefix)
  await execa('pnpm', ['pack', '--pack-destination', work], { cwd: ROOT, stdin: 'ignore' })
  await execa('pnpm', ['add', tarball, '--offline'], { cwd: prefix, stdin: 'ignore' })
}, 180_000)

afterAll(() => rmSync(work, { recursive: true, force: true }))

describe('the packed tarball', () => {
  test('holds the built JavaScript and the command, and no TypeScript or tests', async () => {
    const files = String((await execa('tar', ['-tzf', tarball])).stdout).split('\n').map((f) => f.replace(/^package\//, ''))
    for (const f of ['package.json', 'README.md', 'bin/armproof.mjs', 'bin/node-check.mjs', 'dist/bin/armproof.js', 'dist/helpers/cli/verify.js', 'dist/suites/arm.test.js', 'dist/suites/_setup.js', 'dist/engine/radiance.js']) expect(files).toContain(f)
    expect(files.filter((f) => f.endsWith('.ts'))).toEqual([])
    expect(files.filter((f) => f.startsWith('test/') || f.startsWith('scripts/') || f.startsWith('node_modules/'))).toEqual([])
  })

  test('installs into the empty folder: the command is the installed package, not this checkout', () => {
    const real = realpathSync(join(prefix, 'node_modules/armproof'))
    expect(relative(prefix, real).startsWith('node_modules')).toBe(true)
    expect(pkg.bin).toEqual({ armproof: 'bin/armproof.mjs' })
  })
})

describe('armproof, installed, run from an empty folder', () => {
  test('--help names the commands; --version the version; each command its own --help; an unknown command exits 2', async () => {
    const help = await run(['--help'])
    expect(help.exitCode, help.stderr).toBe(0)
    for (const c of ['verify', 'writeback', 'merge-reports', 'demo']) expect(help.stdout).toMatch(new RegExp(`^  ${c} `, 'm'))
    expect((await run(['--version'])).stdout.trim()).toBe(pkg.version)
    const verifyHelp = await run(['verify', '--help'])
    expect(verifyHelp.exitCode).toBe(0)
    expect(verifyHelp.stdout).toContain('VERIFY_SVC')
    const writebackHelp = await run(['writeback', '--help'])
    expect(writebackHelp.exitCode).toBe(0)
    expect(writebackHelp.stdout).toContain('--vault')
    const mergeHelp = await run(['merge-reports', '--help'])
    expect(mergeHelp.exitCode).toBe(0)
    expect(mergeHelp.stdout).toContain('--out')
    const unknown = await run(['verfiy'])
    expect(unknown.exitCode).toBe(2)
    expect(unknown.stderr).toMatch(/unknown command "verfiy" \(did you mean verify\?\); commands: verify, writeback, merge-reports, demo/)
  })

  describe('against the reference engine', () => {
    let engine: EngineHandle
    beforeAll(async () => {
      engine = await startEngine({ svc: 'pkg-green', processName: 'rpkg-green', args: ['--prefill-interleave', '1'] })
    })
    afterAll(() => engine.stop())

    test('armproof verify is green and writes its report where it was asked to', async () => {
      const r = await run(['verify', '--svc', engine.svc, '--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--base-url', engine.baseUrl, '--process', engine.processName, '--host', 'local', ...FAST, '--report', 'reports/pkg.json'], { PATH: `${engine.binDir}${delimiter}${PATH}` })
      expect(r.exitCode, r.stdout + r.stderr).toBe(0)
      expect(r.stdout).toMatch(/^GREEN · PREFILL_INTERLEAVE=1 proven on pkg-green/m)
      const report = readCheckedReport(join(r.cwd, 'reports/pkg.json'))
      expect(report.verdict).toBe('green')
      expect(report.steps.map((s) => `${s.id} ${s.verdict}`)).toEqual(['dropins', 'help', 'argv', 'ledger', 'health', 'probe.exact', 'probe.tools', 'probe.vision', 'meter'].map((id) => `${id} passed`))
    })
  })

  test('armproof demo starts the packaged reference engine and is green', async () => {
    const r = await run(['demo', '--meter-window', '5s', '--report', 'demo.json'])
    expect(r.exitCode, r.stdout + r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^GREEN · PREFILL_INTERLEAVE=1 proven on demo/m)
    expect(readCheckedReport(join(r.cwd, 'demo.json')).verdict).toBe('green')
  })
})

describe('engines is enforced before any TypeScript loads', () => {
  /** Node with process.versions.node faked, as an old Node would report it. */
  const asNode = (version: string, script: string, args: readonly string[] = []) =>
    execa(process.execPath, ['--import', `data:text/javascript,Object.defineProperty(process,"versions",{value:{...process.versions,node:${JSON.stringify(version)}}})`, script, ...args], { cwd: ROOT, reject: false, stdin: 'ignore' })

  test.each(['20.20.2', '22.18.9', '18.0.0'])('Node %s: one line, what was found, what is needed, the bootstrap; exit 2', async (version) => {
    const r = await asNode(version, 'bin/node-check.mjs')
    expect(r.exitCode).toBe(2)
    expect(String(r.stdout)).toBe('')
    const lines = String(r.stderr).trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(`armproof needs Node >=22.19 (24 LTS); this is Node ${version} (`)
    expect(lines[0]).toContain('run `sh bootstrap.sh demo`')
  })

  test.each(['22.19.0', '23.0.0', '24.21.0'])('Node %s passes', async (version) => {
    const r = await asNode(version, 'bin/node-check.mjs')
    expect(r.exitCode, String(r.stderr)).toBe(0)
    expect(String(r.stderr)).toBe('')
  })

  test('the installed command refuses an old Node the same way, and names no bootstrap it does not ship', async () => {
    const r = await asNode('20.20.2', join(prefix, 'node_modules/armproof/bin/armproof.mjs'), ['--help'])
    expect(r.exitCode).toBe(2)
    expect(String(r.stdout)).toBe('')
    expect(String(r.stderr).trim()).toMatch(/^armproof needs Node >=22\.19 \(24 LTS\); this is Node 20\.20\.2 \(.*\): install Node 24 LTS and run armproof with it$/)
  })

  test('every package.json script that runs TypeScript, tsc or vitest checks the Node version first', () => {
    const runsTs = Object.entries(pkg.scripts).filter(([, s]) => /\.ts\b|\btsc\b|\bvitest\b/.test(s))
    expect(runsTs.map(([name]) => name).sort()).toEqual(['build', 'demo', 'faults-doc', 'merge-reports', 'perf', 'record-demo', 'test', 'verify', 'writeback'])
    for (const [name, script] of runsTs) expect(script, name).toMatch(/^node bin\/node-check\.mjs && /)
  })
})

describe('the Containerfile (it cannot be built here: no container engine; these keep it in step with the package)', () => {
  const text = readFileSync(join(ROOT, 'Containerfile'), 'utf8')
  const instructions = text.replace(/\\\n/g, ' ').split('\n').filter((l) => /^[A-Z]+ /.test(l))
  const copied = instructions.filter((l) => l.startsWith('COPY ') && !l.includes('--from=')).flatMap((l) => l.slice(5).trim().split(/\s+/).slice(0, -1))

  test('stage 1 copies every source the build and the package need, each of which exists, and never .env', () => {
    const build = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8').replace(/^\s*\/\/.*$/gm, '')) as { include: string[] }
    const shipped = pkg.files.filter((f) => !f.startsWith('dist/') && !f.startsWith('bin/')).map((f) => f.replace(/\/$/, ''))
    const needed = ['package.json', 'pnpm-lock.yaml', 'tsconfig.json', 'tsconfig.build.json', 'README.md', 'bin', ...build.include, ...shipped]
    for (const path of needed) expect(copied, path).toContain(path)
    for (const path of copied) expect(existsSync(join(ROOT, path)), path).toBe(true)
    expect(copied.filter((p) => p === '.' || (p.startsWith('.env') && p !== '.env.example'))).toEqual([])
    // Nor does .env reach the build context (the engine receives the whole folder otherwise).
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n')
    for (const entry of ['.env', 'node_modules', '.tools', 'dist']) expect(ignored).toContain(entry)
  })

  test('Node 24 slim, the pinned pnpm, the ssh client, a non-root user, entrypoint armproof', () => {
    const froms = instructions.filter((l) => l.startsWith('FROM '))
    expect(froms.map((l) => l.split(/\s+/)[1])).toEqual(['node:24-slim', 'node:24-slim'])
    expect(text).toContain(`npm install --global --no-audit --no-fund ${pkg.packageManager}`)
    expect(text).toMatch(/apt-get install -y --no-install-recommends openssh-client/)
    expect(instructions.filter((l) => l.startsWith('USER ')).at(-1)).toBe('USER armproof')
    expect(instructions.at(-2)).toBe('ENTRYPOINT ["armproof"]')
    expect(text).toContain(`ln -s /opt/armproof/${pkg.bin.armproof} /usr/local/bin/armproof`)
  })
})
