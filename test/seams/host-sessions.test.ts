// One host's sessions across the runs of one process (helpers/seams/host-sessions.ts): calls
// to one ssh master wait for its first call; once the masters are closed (at exit, or after each
// run of a process that serves many), a later call is a first call again and makes its own.
import { describe, expect, test } from 'vitest'
import { closeMasters, overMaster } from '../../helpers/seams/host-sessions.ts'

describe('ssh masters', () => {
  test("a call waits on the master's first call; after closeMasters a call to the same key runs at once, riding nothing of the run before", async () => {
    let endFirst = (): void => {}
    const order: string[] = []
    const first = overMaster('k', () => new Promise<void>((resolve) => (endFirst = resolve)).then(() => void order.push('first')))
    const second = overMaster('k', async () => void order.push('second'))
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(order).toEqual([])
    closeMasters()
    await overMaster('k', async () => void order.push('after close'))
    expect(order).toEqual(['after close'])
    endFirst()
    await Promise.all([first, second])
    expect(order).toEqual(['after close', 'first', 'second'])
    closeMasters()
  })
})
