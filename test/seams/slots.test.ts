// The counting semaphore (helpers/seams/slots.ts) with a waiter whose signal aborts: it leaves the
// queue and never takes a slot; the others keep their order (those that asked to be first, first).
import { describe, expect, test } from 'vitest'
import { slots } from '../../helpers/seams/slots.ts'

describe('slots: a waiter that lets go', () => {
  test('leaves the queue, never takes a slot, and the others are served in their order', async () => {
    const gate = slots(1)
    const release = await gate.acquire()
    const order: string[] = []
    const wait = (name: string, first: boolean, signal?: AbortSignal) =>
      gate.acquire(first, signal).then(
        (done) => {
          order.push(name)
          done()
        },
        (error: unknown) => void order.push(`${name}: ${(error as Error).name}`),
      )
    const a = new AbortController()
    const f = new AbortController()
    const asked = [
      wait('plain', false),
      wait('gone', false, a.signal),
      wait('first gone', true, f.signal),
      wait('first', true),
      wait('last', false),
    ]
    expect(gate.waiting()).toBe(5)
    a.abort()
    f.abort()
    expect(gate.waiting()).toBe(3)
    // A first asked after a first let go still goes before every plain waiter, after the firsts left.
    asked.push(wait('first again', true))
    release()
    await Promise.all(asked)
    expect(order).toEqual(['gone: AbortError', 'first gone: AbortError', 'first', 'first again', 'plain', 'last'])
    expect([gate.inUse(), gate.waiting()]).toEqual([0, 0])
  })

  test('a signal aborted already: refused at once, even with a slot free', async () => {
    const gate = slots(2)
    await expect(gate.acquire(false, AbortSignal.abort())).rejects.toThrow(/abort/i)
    expect(gate.inUse()).toBe(0)
  })
})

describe('slots: run', () => {
  test('runs one at a time on one slot, and gives the slot back whether the function resolves or rejects', async () => {
    const gate = slots(1)
    const order: string[] = []
    const step = (name: string, fail: boolean) => async () => {
      order.push(`${name} in (${gate.inUse()} in use, ${gate.waiting()} waiting)`)
      await new Promise((r) => setTimeout(r, 5))
      order.push(`${name} out`)
      if (fail) throw new Error(`${name} failed`)
      return name
    }
    const runs = [gate.run(step('a', true)), gate.run(step('b', false)), gate.run(step('c', false))]
    const settled = await Promise.allSettled(runs)
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).toEqual(['a failed', 'b', 'c'])
    expect(order).toEqual([
      'a in (1 in use, 2 waiting)',
      'a out',
      'b in (1 in use, 1 waiting)',
      'b out',
      'c in (1 in use, 0 waiting)',
      'c out',
    ])
    expect([gate.inUse(), gate.waiting()]).toEqual([0, 0])
  })
})
