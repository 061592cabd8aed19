// A shared read (helpers/seams/host-gather.ts) that a target lets go of (its signal aborts: its
// run ended before its steps took it): that target is answered `cancelled` at once; a read not yet
// started leaves it out, and never starts if it was alone; a read under way is ended only when
// every target it answers has let go, so another target's part is never cut short.
import { describe, expect, test } from 'vitest'
import { gatherRead } from '../../helpers/seams/host-gather.ts'
import type { Gather, HostResult, HostRun } from '../../helpers/seams/host-result.ts'

const ECHO: Gather<string> = {
  kind: 'echo',
  keyOf: (k) => k,
  script: (keys) => keys.join(','),
  view: (r, _keys, key) => ({ ...r, stdout: `${key} of ${r.stdout}` }),
}

/** A read that answers after `ms`, or at once `cancelled` when its signal aborts; every read and its signal kept. */
function reads(ms: number) {
  const started: Array<{ req: HostRun; signal: AbortSignal | undefined }> = []
  return {
    started,
    run: (req: HostRun, signal?: AbortSignal): Promise<HostResult> => {
      started.push({ req, signal })
      return new Promise((resolve) => {
        const answer = (failure?: 'cancelled'): void =>
          resolve({
            command: req.script,
            stdout: req.script,
            stderr: '',
            exitCode: failure ? null : 0,
            durationMs: ms,
            ...(failure ? { failure } : {}),
          })
        const timer = setTimeout(() => answer(), ms)
        signal?.addEventListener('abort', () => {
          clearTimeout(timer)
          answer('cancelled')
        })
      })
    },
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('letting go of a shared read', () => {
  test('alone and not yet started: answered cancelled, and the read never starts', async () => {
    const r = reads(10)
    const c = new AbortController()
    const part = gatherRead('g1', r.run, ECHO, 'a', 1000, c.signal)
    c.abort()
    expect((await part).failure).toBe('cancelled')
    await sleep(30)
    expect(r.started).toEqual([])
  })

  test('beside another target, not yet started: the read runs for the other only', async () => {
    const r = reads(10)
    const c = new AbortController()
    const gone = gatherRead('g2', r.run, ECHO, 'a', 1000, c.signal)
    const stays = gatherRead('g2', r.run, ECHO, 'b', 1000)
    c.abort()
    const [g, s] = await Promise.all([gone, stays])
    expect([g.failure, s.stdout, s.failure]).toEqual(['cancelled', 'b of b', undefined])
    expect(r.started.map((x) => x.req.script)).toEqual(['b'])
  })

  test('under way, one of two lets go: the read goes on and the other gets its part; once both let go, it is ended', async () => {
    const r = reads(150)
    const a = new AbortController()
    const b = new AbortController()
    const first = gatherRead('g3', r.run, ECHO, 'a', 1000, a.signal)
    const second = gatherRead('g3', r.run, ECHO, 'b', 1000, b.signal)
    await sleep(30)
    expect(r.started.map((x) => x.req.script)).toEqual(['a,b'])
    a.abort()
    expect((await first).failure).toBe('cancelled')
    expect(r.started[0]!.signal?.aborted).toBe(false)
    const other = await second
    expect([other.stdout, other.failure]).toEqual(['b of a,b', undefined])
    // Both let go while it runs: the read itself is ended.
    const c = new AbortController()
    const d = new AbortController()
    const parts = [gatherRead('g4', r.run, ECHO, 'c', 1000, c.signal), gatherRead('g4', r.run, ECHO, 'd', 1000, d.signal)]
    await sleep(30)
    c.abort()
    expect(r.started[1]!.signal?.aborted).toBe(false)
    d.abort()
    expect(r.started[1]!.signal?.aborted).toBe(true)
    expect((await Promise.all(parts)).map((p) => p.failure)).toEqual(['cancelled', 'cancelled'])
  })

  test('a part let go after its answer changes nothing', async () => {
    const r = reads(5)
    const c = new AbortController()
    const part = await gatherRead('g5', r.run, ECHO, 'a', 1000, c.signal)
    c.abort()
    expect([part.stdout, part.failure, r.started[0]!.signal?.aborted]).toEqual(['a of a', undefined, false])
  })
})
