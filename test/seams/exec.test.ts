// One host program run by helpers/seams/exec.ts, for what only a busy event loop shows: after the
// program exits while a grandchild of its group holds the pipes, the output already in the pipes
// when the drain timer fires is still read (a loop busy past DRAIN_MS after the exit would
// otherwise end the run with it unread), and a process that left the group cannot hold the run.
// And what ends a program from outside: a signal aborted before it starts, and the exit of the
// process that started it.
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test, vi } from 'vitest'
import { DRAIN_MS, execPlan } from '../../helpers/seams/exec.ts'
import { groupLive } from '../support/run-verify.ts'
import { tempDir } from '../support/temp-dir.ts'

const dir = tempDir('armproof-exec-')

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const busy = (ms: number): void => {
  const until = performance.now() + ms
  while (performance.now() < until) {
    // the event loop stays blocked, as under a judge parsing a large page
  }
}
const plan = (script: string) => ({ file: 'sh', args: ['-c', script], env: process.env, timeoutMs: 10_000, maxOutput: 1 << 20 })

test('output a grandchild wrote while the loop was busy past the drain time is kept, and the grandchild ended', async () => {
  const marker = `armproof-late-${process.pid}`
  // The shell exits at once; its grandchild writes a moment later and then holds the pipe.
  const run = execPlan(plan(`echo first; (sleep 0.15; echo late; exec sh -c 'sleep 30; : ${marker}') &`))
  await sleep(60) // the exit is seen and the drain timer armed
  // Busy in the loop's check phase: "late" lands in the pipe unread meanwhile, and the next turn
  // of the loop runs its due timers (the drain timer) before it polls the pipes.
  await new Promise<void>((resolve) =>
    setImmediate(() => {
      busy(DRAIN_MS + 300)
      resolve()
    }),
  )
  const r = await run
  expect(r.exitCode).toBe(0)
  expect(r.stdout).toBe('first\nlate\n')
  await sleep(100)
  expect(execFileSync('sh', ['-c', `ps -eo args | grep -c '[s]leep 30; : ${marker}' || true`], { encoding: 'utf8' }).trim()).toBe('0')
})

test('a process that left the group and holds the pipes ends the wait within two drain times', async () => {
  const marker = `armproof-escaped-${process.pid}`
  const started = performance.now()
  const r = await execPlan(plan(`echo done; setsid sh -c 'sleep 5; : ${marker}' &`))
  const ms = performance.now() - started
  try {
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toBe('done\n')
    expect(r.timedOut).toBe(false)
    // Bounded by the drain times, not by the escaped process's 5 s.
    expect(ms).toBeLessThan(4000)
  } finally {
    execFileSync('sh', ['-c', `pkill -f '[s]leep 5; : ${marker}' || true`])
  }
})

test('a signal aborted before the start: nothing is spawned, and the answer says cancelled', async () => {
  const marker = join(dir, 'never')
  const r = await execPlan(plan(`: > ${marker}`), AbortSignal.abort())
  expect([r.cancelled, r.exitCode, r.timedOut]).toEqual([true, null, false])
  await sleep(200)
  expect(existsSync(marker)).toBe(false)
})

test('a process that exits while its host program runs (an interrupted run exits at once) leaves none behind', async () => {
  const pidFile = join(dir, 'exit.pid')
  const exec = new URL('../../helpers/seams/exec.ts', import.meta.url).href
  const child = `import { execPlan } from ${JSON.stringify(exec)}
void execPlan({ file: 'sh', args: ['-c', 'echo $$ > ${pidFile}; sleep 30'], env: process.env, timeoutMs: 60000, maxOutput: 1024 })
const wait = setInterval(() => { try { if (/^\\d+\\n$/.test(readFileSync(${JSON.stringify(pidFile)}, 'utf8'))) process.exit(0) } catch {} }, 10)
import { readFileSync } from 'node:fs'`
  execFileSync(process.execPath, ['--input-type=module', '-e', child], { timeout: 20_000 })
  const group = Number(readFileSync(pidFile, 'utf8'))
  // Its program sleeps 30 s: the bound is on a kill that never comes, not on speed.
  await vi.waitFor(async () => expect(await groupLive(group), `process group ${group}`).toEqual([]), { timeout: 5000, interval: 20 })
})
