// armproof as an installed tool: `pnpm pack` (which builds dist/ through prepack), the tarball
// installed offline into an empty folder outside the checkout (from the local pnpm store: tests
// reach loopback only), then `armproof --help`, a green `armproof verify` against the reference
// engine and `armproof demo`, each run from an empty folder. Also: an old Node gets one line.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { pathToFileURL } from 'node:url'
import { delimiter, dirname, join, relative } from 'node:path'
import { execa } from 'execa'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startEngine, type EngineHandle } from '../../engine/launch.ts'
import type { Report } from '../../helpers/report/json.ts'
import { FAST, ROOT } from '../support/run-verify.ts'
import { RUNTIME_DEPENDENCIES } from '../../scripts/build-dependencies.ts'
import { checkedFleetReport, readCheckedReport } from '../support/report-schema.ts'
import type { FleetReport } from '../../helpers/fleet/report.ts'
import { STEP_IDS } from '../../helpers/steps/registry.ts'

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string
  packageManager: string
  files: string[]
  scripts: Record<string, string>
  bin: Record<string, string>
}
const work = mkdtempSync(join(tmpdir(), 'armproof-pkg-'))
const prefix = join(work, 'prefix')
const tarball = join(work, `armproof-${pkg.version}.tgz`)
const armproof = join(prefix, 'node_modules/.bin/armproof')
/** The same node as this test first on PATH: the installed command starts with `#!/usr/bin/env node`. */
const PATH = `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`

/** Runs the installed command from a fresh empty folder, as a user of the tool would. */
async function run(args: readonly string[], env: Record<string, string> = {}) {
  const cwd = mkdtempSync(join(work, 'cwd-'))
  const result = await execa(armproof, args, {
    cwd,
    reject: false,
    stdin: 'ignore',
    timeout: 90_000,
    env: { CI: 'true', VERIFY_NO_DOTENV: '1', PATH, ...env },
  })
  return { exitCode: result.exitCode, stdout: String(result.stdout), stderr: String(result.stderr), cwd }
}

/** What an older build left in dist/ (a module since renamed or gone): the build writes over dist/ and removes what it did not write. */
const leftOver = join(ROOT, 'dist/armproof-left-over/gone.js')

const COMMANDS = ['verify', 'preflight', 'writeback', 'merge-reports', 'serve', 'demo', 'effect'] as const
/** A module of dist/ each command's run loads (demo's: verify, which it loads once --help is answered), which its --help alone does not. */
const COMMAND_MODULE: Record<(typeof COMMANDS)[number], string> = {
  verify: 'helpers/cli/verify.js',
  preflight: 'helpers/cli/preflight.js',
  writeback: 'helpers/writeback/command.js',
  'merge-reports': 'helpers/fleet/merge.js',
  serve: 'helpers/serve/command.js',
  demo: 'helpers/cli/verify.js',
  effect: 'helpers/effect/command.js',
}
/** The commands whose --help is also asked beside another word, which the command answers itself: those no other test here runs whole. */
const WHOLE_HELP: readonly string[] = ['preflight', 'merge-reports', 'effect']
/** A preload that lists, as the process exits, every module it loaded into .armproof-loaded in its folder. */
const loadedHook = join(work, 'loaded-hook.mjs')
const hooked = { NODE_OPTIONS: `--import=${pathToFileURL(loadedHook).href}` }
/** The installed package's modules a hooked run loaded, as paths under its dist/. */
const loadedBy = (r: { cwd: string }): string[] =>
  readFileSync(join(r.cwd, '.armproof-loaded'), 'utf8')
    .split('\n')
    .flatMap((url) => /\/node_modules\/armproof\/dist\/(.+)$/.exec(url)?.[1] ?? [])

beforeAll(async () => {
  mkdirSync(prefix)
  writeFileSync(
    loadedHook,
    "import { writeFileSync } from 'node:fs'\nimport { registerHooks } from 'node:module'\nconst loaded = []\nregisterHooks({ load(url, context, next) { loaded.push(url); return next(url, context) } })\nprocess.on('exit', () => writeFileSync('.armproof-loaded', loaded.join('\\n')))\n",
  )
  mkdirSync(dirname(leftOver), { recursive: true })
  writeFileSync(leftOver, 'export {}\n')
  await execa('pnpm', ['pack', '--pack-destination', work], { cwd: ROOT, stdin: 'ignore' })
  // From the checkout's own store: pnpm would otherwise pick a store on the temp folder's filesystem (another one when that is a tmpfs), empty.
  const store = String((await execa('pnpm', ['store', 'path'], { cwd: ROOT, stdin: 'ignore' })).stdout).trim()
  await execa('pnpm', ['add', tarball, '--offline', '--store-dir', store], { cwd: prefix, stdin: 'ignore' })
}, 180_000)

afterAll(() => rmSync(work, { recursive: true, force: true }))

describe('the packed tarball', () => {
  test('holds the built JavaScript and the command, and no TypeScript or tests', async () => {
    const files = String((await execa('tar', ['-tzf', tarball])).stdout)
      .split('\n')
      .map((f) => f.replace(/^package\//, ''))
    for (const f of [
      'package.json',
      'README.md',
      'LICENSE',
      'bin/armproof.mjs',
      'bin/node-check.mjs',
      'dist/bin/armproof.js',
      'dist/helpers/cli/verify.js',
      'dist/suites/arm.test.js',
      'dist/suites/_setup.js',
      'dist/engine/radiance.js',
      'dist/helpers/profiles/radiance.yaml',
      'dist/helpers/profiles/vllm.yaml',
      'dist/helpers/profiles/llama.cpp.yaml',
      'docs/schema/armproof-report-1.json',
      'docs/schema/armproof-fleet-1.json',
    ])
      expect(files).toContain(f)
    // The dependencies' JavaScript a verify loads is bundled under dist/vendor/ (scripts/build.ts), each with its license; vite's client is there because vite checks it at start.
    for (const f of [
      'dist/vendor/vitest/LICENSE.md',
      'dist/vendor/vite/LICENSE.md',
      'dist/vendor/undici/LICENSE',
      'dist/vendor/yaml/LICENSE',
      'dist/vendor/vite/dist/client/client.mjs',
    ])
      expect(files).toContain(f)
    expect(files.filter((f) => f.endsWith('.ts'))).toEqual([])
    expect([files.filter((f) => f.includes('armproof-left-over')), existsSync(dirname(leftOver))]).toEqual([[], false])
    expect(files.filter((f) => f.startsWith('test/') || f.startsWith('scripts/') || f.startsWith('node_modules/'))).toEqual([])
  })

  test('installs into the empty folder: the command is the installed package, not this checkout', () => {
    const real = realpathSync(join(prefix, 'node_modules/armproof'))
    expect(relative(prefix, real).startsWith('node_modules')).toBe(true)
    expect(pkg.bin).toEqual({ armproof: 'bin/armproof.mjs' })
  })

  test('the manifest an SRE reads: MIT, a repository entry, and only what a verify loads as dependencies (rolldown, whose native binding vite starts with, and picomatch)', () => {
    const installed = JSON.parse(readFileSync(join(prefix, 'node_modules/armproof/package.json'), 'utf8')) as {
      license?: string
      repository?: { type?: string; url?: string }
      dependencies?: Record<string, string>
      devDependencies?: Record<string, string>
    }
    expect(installed.license).toBe('MIT')
    expect(installed.repository?.type).toBe('git')
    expect(Object.keys(installed.dependencies ?? {}).sort()).toEqual([...RUNTIME_DEPENDENCIES].sort())
    expect(installed.devDependencies?.execa).toBeDefined()
    // vite's own dependencies that no verify loads are not installed at all.
    for (const absent of ['vite', 'vitest', 'lightningcss', 'postcss', 'execa', 'undici'])
      expect(existsSync(join(prefix, 'node_modules', absent)), absent).toBe(false)
  })
})

describe('armproof, installed, run from an empty folder', () => {
  test('--help names the commands; --version the version; each command its own --help, answered alone without loading the command; an unknown command exits 2', async () => {
    const help = await run(['--help'])
    expect(help.exitCode, help.stderr).toBe(0)
    for (const c of COMMANDS) expect(help.stdout).toMatch(new RegExp(`^  ${c} `, 'm'))
    // Behaviour changed on purpose (issue 26): the top-level --version says `armproof X.Y.Z`, as every command's does.
    // Fifteen processes that only print a line: started side by side, each judged on its own.
    const versionArgs = [
      ['--version'],
      ['-V'],
      ['-v'],
      ...COMMANDS.flatMap((c) => [
        [c, '--version'],
        [c, '-V'],
      ]),
    ]
    const versions = await Promise.all(versionArgs.map((args) => run(args)))
    for (const [i, v] of versions.entries()) {
      expect([v.exitCode, v.stdout, v.stderr], versionArgs[i]!.join(' ')).toEqual([0, `armproof ${pkg.version}`, ''])
    }
    // Each command's --help alone is answered before the command loads (bin/armproof.ts; demo answers it itself, before verify
    // and the engine load); with another word beside it, by the command. A module hook (loadedHook) shows what each loaded.
    // Beside another word only for the two commands no other test here runs whole (verify, writeback, serve and demo are run
    // below); that the alone text is the command's own for the others: "each command's help module …", in this process.
    const helps = await Promise.all(
      COMMANDS.map(async (c) => {
        // Alone, whatever env holds: a VERIFY_JSON that is no yes/no word refuses `verify --no-color --help` (exit 2).
        const [alone, full] = await Promise.all([
          run([c, '--help'], { ...hooked, VERIFY_JSON: 'maybe' }),
          WHOLE_HELP.includes(c) ? run([c, '--no-color', '--help'], hooked) : null,
        ])
        return { c, alone, full, loaded: [loadedBy(alone), full ? loadedBy(full) : []] }
      }),
    )
    for (const { c, alone, full, loaded } of helps) {
      expect([alone.exitCode, alone.stderr], c).toEqual([0, ''])
      // Alone: neither the command's run nor vitest (demo, which answers it itself: neither verify nor the engine).
      const run = (m: string) => m === COMMAND_MODULE[c] || m.startsWith('vendor/vitest/') || (c !== 'demo' && m === `bin/${c}.js`)
      expect(loaded[0]!.filter(run), c).toEqual([])
      if (full === null) continue
      expect([full.exitCode, full.stderr, full.stdout], c).toEqual([0, '', alone.stdout])
      expect(loaded[1], c).toContain(`bin/${c}.js`)
    }
    const helpOf = (c: (typeof COMMANDS)[number]) => helps.find((h) => h.c === c)!.alone
    const short = await run(['writeback', '-h'])
    expect([short.exitCode, short.stdout]).toEqual([0, helpOf('writeback').stdout])
    const verifyHelp = helpOf('verify')
    expect(verifyHelp.stdout).toContain('VERIFY_SVC')
    // Installed, every message names the installed command, never a pnpm script of a checkout.
    expect(verifyHelp.stdout).toMatch(/^Usage: armproof verify --svc <svc> --knob <knob> \[options\]$/m)
    const writebackHelp = helpOf('writeback')
    expect(writebackHelp.stdout).toContain('--vault')
    expect(writebackHelp.stdout).toMatch(/^Usage: armproof writeback --report <file>/m)
    const mergeHelp = helpOf('merge-reports')
    expect(mergeHelp.stdout).toContain('--out')
    expect(mergeHelp.stdout).toMatch(/^Usage: armproof merge-reports /m)
    const preflightHelp = helpOf('preflight')
    expect(preflightHelp.stdout).toContain('PREFLIGHT_CHECKOUT')
    expect(preflightHelp.stdout).toMatch(/^Usage: armproof preflight --svc <svc> --knob <knob> /m)
    const effectHelp = helpOf('effect')
    expect(effectHelp.stdout).toContain('EFFECT_REPORT')
    expect(effectHelp.stdout).toContain('Usage: armproof effect --report')
    const serveHelp = helpOf('serve')
    expect(serveHelp.stdout).toMatch(/^Usage: armproof serve /m)
    expect(helpOf('demo').stdout).toMatch(/^Usage: armproof demo \[--engine /m)
    const refused = await run(['writeback', '--report', 'nothing.json', '--vault', '.'])
    expect(refused.exitCode).toBe(2)
    expect(refused.stderr).toContain('next: pass the file armproof verify wrote with --report')
    for (const r of [help, ...helps.flatMap((h) => (h.full ? [h.alone, h.full] : [h.alone])), refused])
      expect(r.stdout + r.stderr).not.toMatch(/\bpnpm (verify|preflight|writeback|merge-reports|demo|serve|effect|test)\b/)
    const unknown = await run(['verfiy'])
    expect(unknown.exitCode).toBe(2)
    expect(unknown.stderr).toMatch(
      /unknown command "verfiy" \(did you mean verify\?\); commands: verify, preflight, writeback, merge-reports, serve, demo, effect/,
    )
  })

  // One engine for the three runs against it, one after the other, as a fleet's endpoint is verified run after run.
  describe('against the reference engine', () => {
    let engine: EngineHandle
    beforeAll(async () => {
      engine = await startEngine({ svc: 'pkg', processName: 'rpkg', args: ['--prefill-interleave', '1'] })
    })
    afterAll(() => engine.stop())

    test('armproof verify is green and writes its report where it was asked to', async () => {
      const r = await run(
        [
          'verify',
          '--svc',
          engine.svc,
          '--knob',
          'PREFILL_INTERLEAVE',
          '--value',
          '1',
          '--base-url',
          engine.baseUrl,
          '--process',
          engine.processName,
          '--host',
          'local',
          ...FAST,
          '--report',
          'reports/pkg.json',
        ],
        { PATH: `${engine.binDir}${delimiter}${PATH}` },
      )
      expect(r.exitCode, r.stdout + r.stderr).toBe(0)
      expect(r.stdout).toMatch(
        /^GREEN · PREFILL_INTERLEAVE=1 proven on pkg .* · next: armproof writeback --report \S+pkg\.json --vault <dir> · /m,
      )
      expect(r.stdout).not.toMatch(/\bpnpm\b/)
      // No earlier record of the service: the one-flag law's step is skipped on purpose, saying so.
      expect(r.stdout.trimEnd().split('\n').at(-1)).toMatch(/^steps: 9 passed, 0 failed, 0 inconclusive, 1 skipped · /)
      const report = readCheckedReport(join(r.cwd, 'reports/pkg.json'))
      expect(report.verdict).toBe('green')
      expect(report.steps.map((s) => `${s.id} ${s.verdict}`)).toEqual(
        STEP_IDS.map((id) => `${id} ${id === 'one-flag' ? 'skipped' : 'passed'}`),
      )
    })

    test('armproof verify --targets --json: a fleet from the bundled package, the fleet report alone on stdout', async () => {
      const targets = join(mkdtempSync(join(work, 'fleet-')), 'targets.yaml')
      writeFileSync(
        targets,
        `defaults:\n  knob: PREFILL_INTERLEAVE\n  value: 1\n  host: local\ntargets:\n  - svc: ${engine.svc}\n    base-url: ${engine.baseUrl}\n    process: ${engine.processName}\n`,
      )
      const r = await run(['verify', '--targets', targets, ...FAST, '--json'], { PATH: `${engine.binDir}${delimiter}${PATH}` })
      expect(r.exitCode, r.stderr).toBe(0)
      const fleet = checkedFleetReport(JSON.parse(r.stdout) as FleetReport)
      expect([fleet.verdict, fleet.targets.map((t) => `${t.name} ${t.report.verdict}`)]).toEqual(['green', [`${engine.svc} green`]])
      expect(r.stderr).toMatch(/^next for the green targets: armproof writeback /m)
    })

    test('armproof serve from the bundled package: each run is a child verify of the package (its own dist/bin/verify.js), green answered 200, a changed targets file checked in its own thread, SIGTERM ends it', async () => {
      const targets = join(mkdtempSync(join(work, 'serve-')), 'targets.yaml')
      writeFileSync(
        targets,
        `defaults:\n  knob: PREFILL_INTERLEAVE\n  value: 1\n  host: local\n  health-budget: 8s\n  meter-window: 2s\n  probe-timeout: 3s\n  host-timeout: 10s\ntargets:\n  - svc: ${engine.svc}\n    base-url: ${engine.baseUrl}\n    process: ${engine.processName}\n`,
      )
      const cwd = mkdtempSync(join(work, 'cwd-'))
      const server = execa(armproof, ['serve', '--targets', targets, '--listen', '127.0.0.1:0', '--no-token'], {
        cwd,
        reject: false,
        stdin: 'ignore',
        env: { CI: 'true', VERIFY_NO_DOTENV: '1', PATH: `${engine.binDir}${delimiter}${PATH}` },
      })
      let log = ''
      const url = await new Promise<string>((resolve, reject) => {
        server.stdout!.on('data', (d: Buffer) => {
          log += String(d)
          const m = /listening on (http:\/\/\S+)/.exec(log)
          if (m) resolve(m[1]!)
        })
        void server.then((r) => reject(new Error(`serve exited ${r.exitCode}: ${log}${String(r.stderr)}`)))
      })
      expect(log).toMatch(new RegExp(`armproof serve: armproof ${pkg.version.replace(/\./g, '\\.')}, listening on `))
      const answer = await fetch(`${url}/verify/${engine.svc}`, { method: 'POST', signal: AbortSignal.timeout(90_000) })
      const report = (await answer.json()) as Report
      expect([answer.status, report.verdict], log).toEqual([200, 'green'])
      // A changed targets file is checked in serve's own thread (dist/helpers/serve/targets-worker.js):
      // the entry added since the start is known, with its own problem, and no fallback was needed.
      writeFileSync(
        targets,
        `${readFileSync(targets, 'utf8')}  - svc: added-later\n    base-url: ${engine.baseUrl}\n    api-key-file: missing-key.txt\n`,
      )
      const added = await fetch(`${url}/verify/added-later`, { method: 'POST', signal: AbortSignal.timeout(30_000) })
      expect([added.status, ((await added.json()) as { reason: string }).reason], log).toEqual([412, 'target_problem'])
      expect(log).toMatch(/the targets file was read again: 1 target\(s\), 1 with problems/)
      expect(log).not.toContain('checked on the main thread')
      server.kill('SIGTERM')
      const ended = await server
      expect(ended.exitCode, log).toBe(143)
      expect(`${log}${String(ended.stderr)}`).not.toMatch(/\bpnpm\b/)
    })
  })

  // Was inconclusive (exit 3) before the engine profiles: the packaged vllm profile now verifies it.
  test('armproof demo --engine vllm starts the packaged engine speaking vLLM and verifies it green with the packaged vllm profile, naming the installed command', async () => {
    const r = await run(['demo', '--engine', 'vllm', '--meter-window', '5s', '--report', 'demo-vllm.json'])
    expect(r.exitCode, r.stdout + r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^GREEN · ENABLE_PREFIX_CACHING=true proven on demo .* · next: armproof writeback /m)
    expect(r.stdout).toContain('the engine config line (what the engine runs): enable_prefix_caching=True')
    expect(r.stdout + r.stderr).not.toMatch(/\bpnpm\b/)
  })

  test('armproof demo starts the packaged reference engine and is green', async () => {
    const r = await run(['demo', '--meter-window', '5s', '--report', 'demo.json'])
    expect(r.exitCode, r.stdout + r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^GREEN · PREFILL_INTERLEAVE=1 proven on demo .* · next: armproof writeback /m)
    expect(r.stdout).not.toMatch(/\bpnpm\b/)
    expect(readCheckedReport(join(r.cwd, 'demo.json')).verdict).toBe('green')
  })
})

test("each command's help module (what the installed command answers --help alone from) is the text the command prints itself: verify, writeback, serve, in this process", async () => {
  const [{ verify }, { writeback }, { serve }, { verifyHelp }, { writebackHelp }, { serveHelp }] = await Promise.all([
    import('../../helpers/cli/verify.ts'),
    import('../../helpers/writeback/command.ts'),
    import('../../helpers/serve/command.ts'),
    import('../../helpers/cli/verify-help.ts'),
    import('../../helpers/writeback/options.ts'),
    import('../../helpers/serve/options.ts'),
  ])
  for (const [name, command, help] of [
    ['verify', verify, verifyHelp],
    ['writeback', writeback, writebackHelp],
    ['serve', serve, serveHelp],
  ] as const) {
    let out = ''
    let err = ''
    const io = {
      rawArgs: ['--help'],
      env: { VERIFY_NO_DOTENV: '1' },
      cwd: work,
      out: { write: (t: string) => (out += t) },
      err: { write: (t: string) => (err += t) },
    }
    expect([await command(io), err, out], name).toEqual([0, '', `${help()}\n`])
  }
})

describe('engines is enforced before any TypeScript loads', () => {
  /** Node with process.versions.node faked, as an old Node would report it. */
  const asNode = (version: string, script: string, args: readonly string[] = []) =>
    execa(
      process.execPath,
      [
        '--import',
        `data:text/javascript,Object.defineProperty(process,"versions",{value:{...process.versions,node:${JSON.stringify(version)}}})`,
        script,
        ...args,
      ],
      { cwd: ROOT, reject: false, stdin: 'ignore' },
    )

  test.each(['20.20.2', '22.18.9', '18.0.0'])(
    'Node %s: one line, what was found, what is needed, the bootstrap; exit 2',
    async (version) => {
      const r = await asNode(version, 'bin/node-check.mjs')
      expect(r.exitCode).toBe(2)
      expect(String(r.stdout)).toBe('')
      const lines = String(r.stderr).trim().split('\n')
      expect(lines).toHaveLength(1)
      expect(lines[0]).toContain(`armproof needs Node >=22.19 (24 LTS); this is Node ${version} (`)
      expect(lines[0]).toContain('run `sh bootstrap.sh demo`')
    },
  )

  test("a package script's launcher (bin/run.mjs) refuses it the same way, in its own process, and loads no command", async () => {
    const r = await asNode('20.20.2', 'bin/run.mjs', ['verify', '--help'])
    expect(r.exitCode).toBe(2)
    expect(String(r.stdout)).toBe('')
    expect(String(r.stderr).trim()).toMatch(
      /^armproof needs Node >=22\.19 \(24 LTS\); this is Node 20\.20\.2 \(.*\): run `sh bootstrap\.sh demo`/,
    )
    // A Node that fits runs the command (demo's --help: answered before verify loads, some 0.1 CPU-s less than verify's).
    const fits = await asNode('22.19.0', 'bin/run.mjs', ['demo', '--help'])
    expect(fits.exitCode, String(fits.stderr)).toBe(0)
    expect(String(fits.stdout)).toMatch(/^Usage: node bin\/demo\.ts \[--engine radiance\|vllm\|sglang\|llama\.cpp\]/m)
    // A word that is no command run through it: exit 2, the commands named, nothing loaded.
    const other = await asNode('24.21.0', 'bin/run.mjs', ['armproof'])
    expect(other.exitCode).toBe(2)
    expect(String(other.stderr)).toMatch(
      /^armproof: bin\/run\.mjs needs a command first \(verify, preflight, writeback, demo, merge-reports, serve, effect\), got "armproof"/,
    )
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
    expect(String(r.stderr).trim()).toMatch(
      /^armproof needs Node >=22\.19 \(24 LTS\); this is Node 20\.20\.2 \(.*\): install Node 24 LTS and run armproof with it$/,
    )
  })

  test('every package.json script that runs TypeScript, tsc or vitest checks the Node version first', () => {
    const runsTs = Object.entries(pkg.scripts).filter(([, s]) => /\.ts\b|\btsc\b|\bvitest\b|^node bin\/run\.mjs /.test(s))
    expect(runsTs.map(([name]) => name).sort()).toEqual([
      'build',
      'demo',
      'effect',
      'faults-doc',
      'merge-reports',
      'perf',
      'preflight',
      'record-demo',
      'serve',
      'test',
      'test:fast',
      'verify',
      'writeback',
    ])
    // The commands go through bin/run.mjs, which checks it in the same process (it imports node-check.mjs
    // before anything else); the other scripts run node-check.mjs as a process of its own first.
    const commands = ['demo', 'effect', 'merge-reports', 'preflight', 'serve', 'verify', 'writeback']
    for (const [name, script] of runsTs)
      expect(script, name).toMatch(commands.includes(name) ? new RegExp(`^node bin/run\\.mjs ${name}$`) : /^node bin\/node-check\.mjs && /)
    expect(readFileSync(join(ROOT, 'bin/run.mjs'), 'utf8')).toMatch(/^import '\.\/node-check\.mjs'$/m)
  })
})

describe('the Containerfile (built and run by scripts/image.sh from .ci/run, never in pnpm test; these keep it in step with the package)', () => {
  const text = readFileSync(join(ROOT, 'Containerfile'), 'utf8')
  const instructions = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((l) => /^[A-Z]+ /.test(l))
  const copied = instructions
    .filter((l) => l.startsWith('COPY ') && !l.includes('--from='))
    .flatMap((l) => l.slice(5).trim().split(/\s+/).slice(0, -1))

  test('stage 1 copies every source the build and the package need, each of which exists, and never .env', () => {
    const build = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8').replace(/^\s*\/\/.*$/gm, '')) as { include: string[] }
    const shipped = pkg.files.filter((f) => !f.startsWith('dist/') && !f.startsWith('bin/')).map((f) => f.replace(/\/$/, ''))
    const needed = [
      'package.json',
      'pnpm-lock.yaml',
      'tsconfig.json',
      'tsconfig.build.json',
      'README.md',
      'LICENSE',
      'bin',
      'scripts/build.ts',
      'scripts/build-dependencies.ts',
      ...build.include,
      ...shipped,
    ]
    for (const path of needed) expect(copied, path).toContain(path)
    for (const path of copied) expect(existsSync(join(ROOT, path)), path).toBe(true)
    expect(copied.filter((p) => p === '.' || (p.startsWith('.env') && p !== '.env.example'))).toEqual([])
    // Nor does .env reach the build context (the engine receives the whole folder otherwise).
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n')
    for (const entry of ['.env', 'node_modules', '.tools', 'dist']) expect(ignored).toContain(entry)
  })

  test('the BASE_IMAGE (node:24-slim by default), the pinned pnpm, the ssh client, a non-root numeric user, entrypoint armproof', () => {
    const froms = instructions.filter((l) => l.startsWith('FROM '))
    expect(froms.map((l) => l.split(/\s+/)[1])).toEqual([`\${BASE_IMAGE}`, `\${BASE_IMAGE}`])
    expect(text).toMatch(/^ARG BASE_IMAGE=docker\.io\/library\/node:24-slim@sha256:[0-9a-f]{64}$/m)
    expect(text).toContain(`npm install --global --no-audit --no-fund ${pkg.packageManager}`)
    expect(text).toMatch(/apt-get install -y --no-install-recommends openssh-client/)
    // Numeric, so that Kubernetes' runAsNonRoot can check it (a user name cannot be checked).
    expect(instructions.filter((l) => l.startsWith('USER ')).at(-1)).toBe('USER 10001:10001')
    expect(instructions.at(-2)).toBe('ENTRYPOINT ["armproof"]')
    expect(text).toContain(`ln -s /opt/armproof/${pkg.bin.armproof} /usr/local/bin/armproof`)
  })
})
