// A port the launcher hands out is handed out once on the machine: a test's child process (a CLI
// run, the demo) inherits its worker's pool id, hence its slice of ports, and an emulated engine
// keeps its port closed while it "loads", so "free now" would give one port to two engines.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { afterEach, expect, test } from 'vitest'
import { freePort, releasePort } from '../../engine/proc.ts'

const PROC = new URL('../../engine/proc.ts', import.meta.url).href
const SLICE = 500

/** A process of the same slice that takes `n` ports (or all it can), prints them, and holds them until killed. */
async function holder(n: number): Promise<{ child: ChildProcess; ports: number[] }> {
  const script = `const { freePort } = await import(${JSON.stringify(PROC)}); const got = []; try { for (let i = 0; i < ${n}; i++) got.push(await freePort()) } catch {} console.log(JSON.stringify(got)); process.stdin.resume()`
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, VITEST_POOL_ID: process.env.VITEST_POOL_ID ?? '1' },
  })
  children.push(child)
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string]
  return { child, ports: JSON.parse(line) as number[] }
}

const children: ChildProcess[] = []
const mine: number[] = []
// The holders are gone before the next test or file of this worker asks for a port of the slice:
// a holder still alive for a moment after its SIGKILL would hold all it took.
afterEach(async () => {
  await Promise.all(
    children.splice(0).map(async (c) => {
      if (c.exitCode !== null || c.signalCode !== null) return
      const exited = once(c, 'exit')
      c.kill('SIGKILL')
      await exited
    }),
  )
  for (const p of mine.splice(0)) releasePort(p)
})

async function takeAll(): Promise<{ ports: number[]; exhausted: string }> {
  const ports: number[] = []
  for (;;) {
    try {
      const p = await freePort()
      ports.push(p)
      mine.push(p)
    } catch (error) {
      return { ports, exhausted: (error as Error).message }
    }
  }
}

test('two processes of one slice never hand out one port, and a killed holder’s ports come back', async () => {
  // In a whole pnpm test, this worker's earlier files may still hold some of the slice's ports
  // (their engines, Prometheus servers and leases live until the file or the worker ends): what the
  // holder gets is what was free, and every bound below is taken from it.
  const other = await holder(200)
  expect(new Set(other.ports).size).toBe(other.ports.length)
  expect(other.ports.length).toBeGreaterThan(50)
  const first = await takeAll()
  expect(first.exhausted).toMatch(/^freePort: no free port on 127\.0\.0\.1 in \d+-\d+$/)
  expect(first.ports.filter((p) => other.ports.includes(p))).toEqual([])
  // Everything else of the slice that was free (a port some other program listens on is skipped).
  expect(first.ports.length + other.ports.length).toBeLessThanOrEqual(SLICE)
  if (other.ports.length === 200) expect(first.ports.length).toBeGreaterThan(SLICE - 200 - 100)

  // The holder dies without releasing: its leases are stale and its ports are handed out again.
  other.child.kill('SIGKILL')
  await once(other.child, 'exit')
  const second = await takeAll()
  expect(second.ports.filter((p) => other.ports.includes(p)).length).toBeGreaterThan(other.ports.length * 0.9)
  expect(second.ports.filter((p) => first.ports.includes(p))).toEqual([])
})

test('a released port is handed out again, to another process too', async () => {
  const p = await freePort()
  releasePort(p)
  const all = await takeAll()
  expect(all.ports).toContain(p)
  for (const q of mine.splice(0)) releasePort(q)
  const other = await holder(SLICE)
  // With every port of the slice released here, the other process gets them.
  expect(other.ports).toContain(p)
})
