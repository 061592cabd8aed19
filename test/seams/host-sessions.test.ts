// One host's sessions across the runs of one process (helpers/seams/host-sessions.ts): calls
// to one ssh master wait for its first call; once the masters are closed (at exit, or after each
// run of a process that serves many), a later call is a first call again and makes its own. The
// master's socket path fits a socket under a temp folder as deep as macOS' own.
import { existsSync, mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, test, vi } from 'vitest'
import { closeMasters, controlPath, MAX_CONTROL_PATH, overMaster, sshControl } from '../../helpers/seams/host-sessions.ts'
import { tempDir } from '../support/temp-dir.ts'

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

describe('the ControlPath', () => {
  afterEach(() => {
    closeMasters()
    vi.unstubAllEnvs()
  })

  test('one per destination and set of --ssh-opts, in a folder of its own that closeMasters removes', () => {
    const a = sshControl('deploy@gpu-7:22', ['-i', '/k'])!
    expect(sshControl('deploy@gpu-7:22', ['-i', '/k'])).toBe(a)
    expect(sshControl('deploy@gpu-8:22', ['-i', '/k'])).not.toBe(a)
    expect(sshControl('deploy@gpu-7:22', ['-i', '/other'])).not.toBe(a)
    expect(dirname(sshControl('root@gpu-8:2222', [])!)).toBe(dirname(a))
    expect(existsSync(dirname(a))).toBe(true)
    closeMasters()
    expect(existsSync(dirname(a))).toBe(false)
  })

  test("under a temp folder as deep as macOS' (48 characters) the socket path fits; where none would fit, no master at all", () => {
    // At least as deep as /var/folders/<2>/<30>/T, the TMPDIR macOS hands a user's processes.
    const base = tempDir('armproof-deep-')
    const deep = join(base, 'x'.repeat(Math.max(1, 47 - base.length)))
    mkdirSync(deep)
    expect(deep.length).toBeGreaterThanOrEqual(48)
    vi.stubEnv('TMPDIR', deep)
    const path = sshControl('deploy@gpu-7.example.internal:22', ['-i', '/k', '-o', 'UserKnownHostsFile=/k/known_hosts'])
    expect(path, 'a ControlPath').toBeDefined()
    expect(path!.startsWith(deep)).toBe(true)
    expect(Buffer.byteLength(path!)).toBeLessThanOrEqual(MAX_CONTROL_PATH)
    vi.stubEnv('TMPDIR', join(deep, 'y'.repeat(MAX_CONTROL_PATH)))
    expect(sshControl('deploy@gpu-7:22', [])).toBeUndefined()
    // The name is short and the same for one destination and options wherever the folder is.
    expect(controlPath('/a', 'deploy@gpu-7:22', [])).toMatch(/^\/a\/[0-9a-f]{12}$/)
    expect(controlPath('/b', 'deploy@gpu-7:22', []).slice(3)).toBe(controlPath('/a', 'deploy@gpu-7:22', []).slice(3))
  })
})
