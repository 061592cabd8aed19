// Engines an interpreter runs as a script, on this machine's real /proc (helpers/engine/named.ts):
// a script through the interpreter's path (its task name is the script's) and one
// through `#!/usr/bin/env node` (its task name is node's) are both found under the script's name,
// where pidof finds neither; a process that only names the script is not.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { chmodSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
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
})
