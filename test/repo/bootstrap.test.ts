// bootstrap.sh decides what a bare machine lacks, says so, installs only that into .tools/, and
// runs pnpm install then the command with it: a package script straight (never `pnpm <script>`,
// whose failure pnpm 12 ends with an ELIFECYCLE line), anything else through pnpm. Offline: copies
// of bootstrap.sh, package.json and bin/node-check.mjs, run.mjs, compile-cache.mjs (the commands' launcher) in a temp folder, with stand-ins for node (a
// real Node reporting an older version), npm (records its arguments and "installs" stand-ins),
// pnpm (records its calls) and the scripts' own files (record theirs).
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { afterAll, describe, expect, test } from 'vitest'
import { ROOT } from '../support/run-verify.ts'

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { packageManager: string }
const PNPM = pkg.packageManager.replace(/^pnpm@/, '')
const NODE_PIN = /^NODE_PIN=(\S+)$/m.exec(readFileSync(join(ROOT, 'bootstrap.sh'), 'utf8'))![1]!
const base = mkdtempSync(join(tmpdir(), 'armproof-bootstrap-'))
afterAll(() => rmSync(base, { recursive: true, force: true }))

/** The few system tools bootstrap.sh and the stand-ins use, and nothing else: no node, npm or pnpm of this machine. */
const system = join(base, 'system')
mkdirSync(system)
for (const tool of ['sh', 'sed', 'dirname', 'mkdir', 'cp', 'cat']) {
  const found = ['/usr/bin', '/bin'].map((d) => join(d, tool)).find((p) => existsSync(p))
  if (!found) throw new Error(`bootstrap.test.ts: ${tool} not found in /usr/bin or /bin`)
  symlinkSync(found, join(system, tool))
}

function script(path: string, text: string): void {
  writeFileSync(path, `#!/bin/sh\n${text}`)
  chmodSync(path, 0o755)
}

/** A real Node that reports `version` (process.versions and --version), as an older one would. */
function fakeNode(path: string, version: string): void {
  const hook = `data:text/javascript,Object.defineProperty(process,"versions",{value:{...process.versions,node:"${version}"}})`
  script(path, `if [ "$1" = --version ]; then echo v${version}; exit 0; fi\nexec '${process.execPath}' --import '${hook}' "$@"\n`)
}

/** A pnpm that reports `version` and records every other call. */
function fakePnpm(path: string, version: string, log: string): void {
  script(path, `if [ "$1" = --version ]; then echo ${version}; exit 0; fi\necho "pnpm $*" >> '${log}'\n`)
}

interface Machine {
  node?: string
  pnpm?: string
  npm?: boolean
}

/** A checkout with only what bootstrap.sh reads, and a PATH with the machine's stand-ins first. */
function machine(name: string, m: Machine) {
  const dir = join(base, name)
  const repo = join(dir, 'repo')
  const bin = join(dir, 'bin')
  const templates = join(dir, 'templates')
  const log = join(dir, 'calls.log')
  for (const d of [join(repo, 'bin'), bin, templates]) mkdirSync(d, { recursive: true })
  copyFileSync(join(ROOT, 'bootstrap.sh'), join(repo, 'bootstrap.sh'))
  copyFileSync(join(ROOT, 'package.json'), join(repo, 'package.json'))
  for (const file of ['bin/node-check.mjs', 'bin/run.mjs', 'bin/compile-cache.mjs']) copyFileSync(join(ROOT, file), join(repo, file))
  // The files the package scripts start: each records how it was started, and exits as told.
  mkdirSync(join(repo, 'scripts'))
  for (const file of ['bin/demo.ts', 'bin/verify.ts', 'scripts/test.ts']) {
    writeFileSync(
      join(repo, file),
      `import { appendFileSync } from 'node:fs'\nappendFileSync(${JSON.stringify(log)}, ${JSON.stringify(`script ${file}`)} + process.argv.slice(2).map((a) => ' ' + a).join('') + ' [' + process.env.ARMPROOF_LAUNCHER + ', .bin on PATH: ' + process.env.PATH.startsWith(${JSON.stringify(join(repo, 'node_modules/.bin'))}) + ']\\n')\nprocess.exit(Number(process.env.STANDIN_EXIT ?? 0))\n`,
    )
  }
  if (m.node) fakeNode(join(bin, 'node'), m.node)
  if (m.pnpm) fakePnpm(join(bin, 'pnpm'), m.pnpm, log)
  // What npm "installs" into .tools/node_modules/.bin: the pinned Node and pnpm.
  fakeNode(join(templates, 'node'), NODE_PIN)
  fakePnpm(join(templates, 'pnpm'), PNPM, log)
  if (m.npm !== false) {
    script(
      join(bin, 'npm'),
      `echo "npm $*" >> '${log}'
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=$2; shift ;;
    node@*) mkdir -p "$prefix/node_modules/.bin"; cp '${templates}/node' "$prefix/node_modules/.bin/node" ;;
    pnpm@*) mkdir -p "$prefix/node_modules/.bin"; cp '${templates}/pnpm' "$prefix/node_modules/.bin/pnpm" ;;
  esac
  shift
done
`,
    )
  }
  const run = async (...args: string[]) => runWith({}, ...args)
  const runWith = async (env: Record<string, string>, ...args: string[]) => {
    rmSync(log, { force: true })
    const r = await execa(join(system, 'sh'), [join(repo, 'bootstrap.sh'), ...args], {
      reject: false,
      stdin: 'ignore',
      extendEnv: false,
      // TMPDIR: the launcher's compile cache of the stand-ins goes into this machine's folder, removed with it.
      env: { PATH: `${bin}:${system}`, HOME: dir, TMPDIR: dir, ...env },
      timeout: 20_000,
    })
    const calls = existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []
    return { exitCode: r.exitCode, stderr: String(r.stderr), stdout: String(r.stdout), calls }
  }
  return { repo, run, runWith }
}

/** How a package script's file was started by the bootstrap: its arguments, the launcher it was told, node_modules/.bin first on PATH. */
const started = (file: string, args = '', name = file.replace(/^.*\/|\.ts$/g, '')) =>
  `script ${file}${args} [bootstrap:${name}, .bin on PATH: true]`

const INSTALL = `pnpm install --frozen-lockfile --config.confirmModulesPurge=false`

describe('sh bootstrap.sh', () => {
  test('Node 20 and no pnpm: says what it found, installs the pinned Node and pnpm into .tools/, then pnpm install and the command', async () => {
    const m = machine('bare', { node: '20.20.2' })
    const r = await m.run('demo')
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stderr).toContain(`bootstrap: armproof needs Node >=22.19; found Node v20.20.2 at `)
    expect(r.stderr).toContain(`bootstrap: armproof needs pnpm ${PNPM}; found no pnpm on PATH.`)
    // Said before it happens, where it goes, and that no password is involved.
    const said = r.stderr.indexOf(
      `bootstrap: installing node@${NODE_PIN} pnpm@${PNPM} from the npm registry into ${m.repo}/.tools (ignored by git; no sudo`,
    )
    expect(said).toBeGreaterThan(-1)
    expect(r.calls).toEqual([
      `npm install --prefix ${m.repo}/.tools --no-audit --no-fund --loglevel=error node@${NODE_PIN} pnpm@${PNPM}`,
      INSTALL,
      started('bin/demo.ts'),
    ])
    expect(r.stderr).toContain(
      `using Node v${NODE_PIN} at ${m.repo}/.tools/node_modules/.bin/node, pnpm ${PNPM} at ${m.repo}/.tools/node_modules/.bin/pnpm`,
    )

    // Again: the tools in .tools/ are used, nothing is installed twice; arguments pass through.
    const again = await m.run('verify', '--svc', 'a b')
    expect(again.exitCode, again.stderr).toBe(0)
    expect(again.calls).toEqual([INSTALL, started('bin/verify.ts', ' --svc a b')])
    expect(again.stderr).not.toContain('installing')
  })

  test("Node 22.19 and the pinned pnpm: nothing installed, the machine's tools run the command", async () => {
    const m = machine('fits', { node: '22.19.0', pnpm: PNPM })
    const r = await m.run('test')
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.calls).toEqual([INSTALL, started('scripts/test.ts', '', 'test')])
    expect(r.stderr).toMatch(/^bootstrap: using Node v22\.19\.0 at .*, pnpm \S+ at /m)
    expect(existsSync(join(m.repo, '.tools'))).toBe(false)
  })

  test('Node 24 and another pnpm: only pnpm is installed', async () => {
    const m = machine('old-pnpm', { node: NODE_PIN, pnpm: '11.9.0' })
    const r = await m.run('demo')
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stderr).toContain(`armproof needs pnpm ${PNPM}; found pnpm 11.9.0 at `)
    expect(r.calls[0]).toBe(`npm install --prefix ${m.repo}/.tools --no-audit --no-fund --loglevel=error pnpm@${PNPM}`)
    expect(r.calls.slice(1)).toEqual([INSTALL, started('bin/demo.ts')])
  })

  test('an old Node without npm: exit 1, says what it needs, installs and runs nothing', async () => {
    const m = machine('no-npm', { node: '18.0.0', npm: false })
    const r = await m.run('demo')
    expect(r.exitCode).toBe(1)
    expect(r.stderr).toMatch(/^bootstrap: installing node@\S+ pnpm@\S+ needs npm \(it comes with Node >= 18\)/m)
    expect(r.calls).toEqual([])
    expect(existsSync(join(m.repo, '.tools'))).toBe(false)
  })

  test('a failing script exits with its own code and no ELIFECYCLE line; a word that is no script goes to pnpm', async () => {
    const m = machine('failing', { node: NODE_PIN, pnpm: PNPM })
    const r = await m.runWith({ STANDIN_EXIT: '3' }, 'verify', '--svc', 'x')
    expect(r.exitCode).toBe(3)
    expect(r.calls).toEqual([INSTALL, started('bin/verify.ts', ' --svc x')])
    expect(r.stdout + r.stderr).not.toMatch(/ELIFECYCLE|Command failed/)
    const other = await m.run('exec', 'tsc', '--version')
    expect(other.exitCode, other.stderr).toBe(0)
    expect(other.calls).toEqual([INSTALL, 'pnpm exec tsc --version'])
  })

  test('no command: installs, then says how to use the same tools', async () => {
    const m = machine('no-command', { node: '20.20.2' })
    const r = await m.run()
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.calls.at(-1)).toBe(INSTALL)
    expect(r.stderr).toContain(
      `bootstrap: ready. To run pnpm commands with the same tools in this shell: export PATH="${m.repo}/.tools/node_modules/.bin:$PATH"`,
    )
  })
})
