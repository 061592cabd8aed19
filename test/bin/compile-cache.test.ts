// armproof's commands turn Node's compile cache on (bin/compile-cache.mjs, from bin/run.mjs and each bin/<command>.ts): in armproof's own
// folder under the temp folder, bounded; in NODE_COMPILE_CACHE's folder when that is set; not at
// all with NODE_DISABLE_COMPILE_CACHE=1. Each case runs in a child process with its own TMPDIR.
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { MAX_ENTRIES } from '../../bin/compile-cache.mjs'
import { ROOT } from '../support/run-verify.ts'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

function temp(): string {
  const d = mkdtempSync(join(tmpdir(), 'armproof-cc-test-'))
  dirs.push(d)
  return d
}

/** Runs `node …args` in the checkout with `env` in place of the compile-cache variables; resolves with stdout. */
function node(args: readonly string[], env: Record<string, string>): Promise<{ code: number; stdout: string }> {
  const { NODE_COMPILE_CACHE: _a, NODE_DISABLE_COMPILE_CACHE: _b, ...rest } = process.env
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { cwd: ROOT, env: { ...rest, CI: 'true', VERIFY_NO_DOTENV: '1', ...env }, encoding: 'utf8', timeout: 30_000 },
      (error, stdout) => {
        resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout })
      },
    )
  })
}

/** Where startCompileCache() puts this process's cache, as Node reports it ('' when off). */
const WHERE =
  "const m = await import('./bin/compile-cache.mjs'); m.startCompileCache(); process.stdout.write((await import('node:module')).getCompileCacheDir() ?? '')"

describe("armproof's compile cache", () => {
  test('goes to armproof-compile-cache in the temp folder by default', async () => {
    const tmp = temp()
    expect((await node(['--input-type=module', '-e', WHERE], { TMPDIR: tmp })).stdout).toMatch(
      new RegExp(`^${join(tmp, 'armproof-compile-cache')}`),
    )
  })

  test("is NODE_COMPILE_CACHE's folder when that is set, and off with NODE_DISABLE_COMPILE_CACHE=1", async () => {
    const tmp = temp()
    expect((await node(['--input-type=module', '-e', WHERE], { TMPDIR: tmp, NODE_COMPILE_CACHE: join(tmp, 'mine') })).stdout).toMatch(
      new RegExp(`^${join(tmp, 'mine')}`),
    )
    expect((await node(['--input-type=module', '-e', WHERE], { TMPDIR: tmp, NODE_DISABLE_COMPILE_CACHE: '1' })).stdout).toBe('')
    expect(existsSync(join(tmp, 'armproof-compile-cache'))).toBe(false)
  })

  test('is filled by pnpm verify, and emptied once it holds more than its bound', async () => {
    const tmp = temp()
    const cache = join(tmp, 'armproof-compile-cache')
    expect((await node(['bin/verify.ts', '--help'], { TMPDIR: tmp })).code).toBe(0)
    const [version] = readdirSync(cache)
    const filled = readdirSync(join(cache, version!)).length
    expect(filled).toBeGreaterThan(10)
    mkdirSync(join(cache, 'stale'))
    for (let i = 0; i <= MAX_ENTRIES; i++) writeFileSync(join(cache, 'stale', String(i)), '')
    expect((await node(['bin/verify.ts', '--help'], { TMPDIR: tmp })).code).toBe(0)
    expect(readdirSync(cache)).toEqual([version])
    expect(readdirSync(join(cache, version!)).length).toBe(filled)
  })

  test("through bin/run.mjs (what pnpm verify runs), a warm run never loads Node's TypeScript stripper, the suite's file included", async () => {
    const tmp = temp()
    // Node's own list of the internal modules it loaded, read as the process exits: the stripper is amaro.
    const stripper = `data:text/javascript,process.on("exit",()=>process.stdout.write("\\nstripper:"+process.moduleLoadList.some((m)=>/amaro/.test(m))))`
    const run = async (args: readonly string[]) =>
      (await node(['--import', stripper, 'bin/run.mjs', 'verify', ...args], { TMPDIR: tmp })).stdout
    // A replay goes through the arm suite, which vitest imports under a query of its own (helpers/cli/suite-source.ts).
    const replay = ['--svc', 'demo', '--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--mode', 'replay']
    // Cold, the .ts sources are stripped (and the result kept); warm, all of it comes from the cache.
    expect(await run(replay)).toMatch(/\nsteps: 9 passed, 0 failed, 0 inconclusive, 1 skipped [^\n]*\n\nstripper:true$/)
    expect(await run(replay)).toMatch(/\nsteps: 9 passed, 0 failed, 0 inconclusive, 1 skipped [^\n]*\n\nstripper:false$/)
    expect(await run(['--help'])).toMatch(/^Usage: node bin\/verify\.ts [\s\S]*\nstripper:false$/m)
    expect(readdirSync(join(tmp, 'armproof-compile-cache'))).toHaveLength(1)
  })
})
