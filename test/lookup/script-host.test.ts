// Engines an interpreter runs as a script, on this machine's real /proc (helpers/engine/named.ts,
// ./binary.ts): a script through the interpreter's path (its task name is the script's) and one
// through `#!/usr/bin/env node` (its task name is node's) are both found under the script's name,
// where pidof finds neither; a process that only names the script is not; and the binary read
// from /proc/<pid>/exe is the interpreter and the script, as the process runs them.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { chmodSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { binaryScript, parseBinary, readBinary } from '../../helpers/engine/binary.ts'
import { findEngine, type EngineQuery } from '../../helpers/engine/find.ts'
import { parseSurvey, surveyScript } from '../../helpers/engine/survey.ts'
import { createHost } from '../../helpers/seams/host.ts'
import { removeTempDir, tempDir } from '../support/temp-dir.ts'

const RUN = process.pid % 100_000
const dir = tempDir('armproof-scripts-')
const children: ChildProcess[] = []
const IDLE = 'setInterval(() => {}, 1 << 30)\n'

function script(name: string, shebang: string): string {
  const path = join(dir, name)
  writeFileSync(path, `${shebang}\n${IDLE}`)
  chmodSync(path, 0o755)
  return path
}

function start(file: string, args: string[] = []): ChildProcess {
  const child = spawn(file, args, {
    stdio: 'ignore',
    env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` },
  })
  child.on('error', () => {})
  children.push(child)
  return child
}

/** Until the process runs what it was started to run (its cmdline no longer the launcher's). */
async function running(child: ChildProcess, argv1: string): Promise<void> {
  const deadline = Date.now() + 10_000
  while (Date.now() < deadline) {
    try {
      const argv = execFileSync('cat', [`/proc/${child.pid}/cmdline`], { encoding: 'utf8' }).split('\0')
      if (argv[1] === argv1) return
    } catch {
      // not there yet
    }
    await new Promise((r) => setTimeout(r, 20))
  }
  throw new Error(`pid ${child.pid} never ran ${argv1}`)
}

const host = () => createHost({ host: { kind: 'local' }, sshOpts: [], deployUser: null, sudo: 'never', env: {} })
const query = (name: string): EngineQuery => ({
  process: name,
  svc: name,
  unit: null,
  port: 1,
  urlHost: '127.0.0.1',
  pidCmd: null,
  host: { kind: 'local' },
  timeoutMs: 10_000,
  runtime: 'process',
})
const pidof = (name: string): string => {
  try {
    return execFileSync('pidof', [name], { encoding: 'utf8' }).trim()
  } catch {
    return ''
  }
}

let direct: ChildProcess
let viaEnv: ChildProcess
const DIRECT = `sd-${RUN}`
const VIA_ENV = `se-${RUN}`
beforeAll(async () => {
  direct = start(script(DIRECT, `#!${process.execPath}`))
  viaEnv = start(script(VIA_ENV, '#!/usr/bin/env node'))
  // A stray: an interpreter running another script, with the name only as its argument.
  const other = script(`other-${RUN}`, `#!${process.execPath}`)
  const stray = start(process.execPath, [other, DIRECT])
  await Promise.all([running(direct, join(dir, DIRECT)), running(viaEnv, join(dir, VIA_ENV)), running(stray, other)])
})
afterAll(() => {
  // Each by its own pid: only what this file started.
  for (const c of children) if (c.pid !== undefined && c.exitCode === null) c.kill('SIGKILL')
  removeTempDir(dir)
})

describe('a script an interpreter runs, on the real /proc', () => {
  test('found under its name through the interpreter path and through env (pidof finds neither); the stray is not named', async () => {
    expect([pidof(DIRECT), pidof(VIA_ENV)]).toEqual(['', ''])
    const r = await host().run({ script: surveyScript(DIRECT, 1), privileged: true, timeoutMs: 10_000 })
    expect(parseSurvey(r.stdout).named).toEqual([String(direct.pid)])
    const found = await findEngine(host(), query(VIA_ENV))
    expect(found).toMatchObject({ kind: 'found', pid: String(viaEnv.pid), foundBy: 'pidof' })
    expect(found.kind === 'found' && found.how).toContain(`running its script ${join(dir, VIA_ENV)}`)
  })

  test('its binary, read from /proc/<pid>/exe: the interpreter as its command line names it, and the script', async () => {
    const argv = execFileSync('cat', [`/proc/${direct.pid}/cmdline`], { encoding: 'utf8' })
      .split('\0')
      .slice(0, -1)
    const read = await readBinary(host(), query(DIRECT), String(direct.pid), argv)
    expect(read).toMatchObject({
      kind: 'read',
      binary: { words: [process.execPath, join(dir, DIRECT)], script: join(dir, DIRECT), replaced: false },
    })
  })
})

describe('the binary read, parsed', () => {
  const VENV = ['/opt/venv/bin/python3', '/opt/venv/bin/vllm', 'serve', 'm']
  const out = (exe: string, cwd = '/srv', argv0?: string) =>
    `@@armproof exe\n${exe}\n@@armproof cwd\n${cwd}\n${argv0 !== undefined ? `@@armproof argv0\n${argv0}\n` : ''}`
  test.each([
    [
      'a venv interpreter (its path leads to the running binary)',
      VENV,
      out('/usr/bin/python3.11', '/srv', '/usr/bin/python3.11'),
      ['/opt/venv/bin/python3', '/opt/venv/bin/vllm'],
    ],
    [
      'an interpreter path that is no longer the running binary',
      VENV,
      out('/usr/bin/python3.11', '/srv', '/usr/bin/python3.12'),
      ['/usr/bin/python3.11', '/opt/venv/bin/vllm'],
    ],
    [
      'an interpreter found on a PATH, a script relative to its cwd',
      ['python3', 'bin/vllm', 'serve'],
      out('/usr/bin/python3.11', '/opt/venv'),
      ['/usr/bin/python3.11', '/opt/venv/bin/vllm'],
    ],
    [
      'a native binary',
      ['/opt/llama/llama-server', '--port', '8080'],
      out('/opt/llama/build/bin/llama-server'),
      ['/opt/llama/build/bin/llama-server'],
    ],
    [
      'a native binary replaced on disk since it started',
      ['llama-server'],
      out('/opt/llama/build/bin/llama-server (deleted)'),
      ['/proc/77/exe'],
    ],
    [
      'an interpreter replaced on disk',
      VENV,
      out('/usr/bin/python3.11 (deleted)', '/srv', '/usr/bin/python3.11'),
      ['/proc/77/exe', '/opt/venv/bin/vllm'],
    ],
  ])('%s', (_what, argv, stdout, words) => {
    const b = parseBinary('77', argv, stdout)
    expect(typeof b === 'string' ? b : b.words).toEqual(words)
  })

  test('an exe that cannot be read, or a relative script without a cwd, is said, not guessed', () => {
    expect(parseBinary('77', VENV, '@@armproof exe\n@@armproof cwd\n')).toBe('readlink /proc/77/exe printed nothing')
    expect(parseBinary('77', ['python3', 'vllm'], out('/usr/bin/python3.11', ''))).toBe(
      'pid 77 runs the script vllm, a relative path, and its working folder (/proc/77/cwd) could not be read',
    )
  })

  test('the command line reaches the script only quoted; a pid is digits', () => {
    const s = binaryScript('77', ["/tmp/x'; touch /tmp/pwned; '", 'vllm'])
    expect(s).toContain(`readlink -f -- '/tmp/x'\\''; touch /tmp/pwned; '\\'''`)
    expect(() => binaryScript('7 7', [])).toThrow(/not a pid/)
  })
})
