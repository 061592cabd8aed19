// The tests' own hygiene in the temp folder: what tempDir makes (test/support/temp-dir.ts) goes
// once its file has run (the unit project's setup file calls removeTempDirs after every file),
// and a run started with a TMPDIR of its own ends red when anything else is left there
// (test/support/temp-check.ts), naming what is left and where it should have been removed.
import { chmodSync, existsSync, mkdirSync, readdirSync, statfsSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test, vi } from 'vitest'
import config from '../../vitest.config.ts'
import setup, { leftMessage, strays, tempCheck } from '../support/temp-check.ts'
import { removeTempDir, removeTempDirs, tempDir } from '../support/temp-dir.ts'
import { ours, sharedTempPath, sharedTempRoot } from '../support/temp-root.ts'

/** A folder standing in for a run's TMPDIR, holding `names` (folders). */
function fakeTmp(names: readonly string[]): string {
  const dir = tempDir('armproof-fake-tmp-')
  for (const name of names) mkdirSync(join(dir, name))
  return dir
}

const KEPT = [
  'armproof-test-compile-cache-2730395f2c',
  'armproof-test-compile-cache',
  'armproof-compile-cache',
  'radiance-ref-compile-cache',
  'radiance-ref-ports-0',
  'armproof-effect-tsdb-cache-18e1ab7882795b78',
]

describe('tempDir', () => {
  test('a fresh folder under the temp folder each time, removed by removeTempDir, or with every other by removeTempDirs', () => {
    const [a, b, c] = [tempDir('armproof-td-'), tempDir('armproof-td-'), tempDir('armproof-td-')]
    expect(new Set([a, b, c]).size).toBe(3)
    writeFileSync(join(a, 'report.json'), '{}')
    mkdirSync(join(b, 'deep'))
    removeTempDir(a)
    expect([existsSync(a), existsSync(b), existsSync(c)]).toEqual([false, true, true])
    removeTempDirs()
    expect([existsSync(b), existsSync(c)]).toEqual([false, false])
  })

  test('the unit project removes them after every file (its setup file) and checks a TMPDIR of its own (its globalSetup)', () => {
    const unit = config.test?.projects?.find((p) => typeof p === 'object' && 'test' in p && p.test?.name === 'unit') as
      | { test: { setupFiles?: string[]; globalSetup?: string[] } }
      | undefined
    expect(unit?.test.setupFiles).toContain('test/support/temp-dir-sweep.ts')
    expect(unit?.test.globalSetup).toContain('test/support/temp-check.ts')
  })
})

describe('the check of a TMPDIR of its own', () => {
  test("nothing is a stray but what no one keeps; vitest's own folder of the run is not one, ours of its length are", () => {
    // (the effect's kept blocks, not their copy on its way in)
    const staging = 'armproof-effect-tsdb-cache-18e1ab7882795b78.4242-1764620000000'
    const dir = fakeTmp([...KEPT, 'V1StGXR8_Z5jdHi6B-myT', 'armproof-plan-Ab12Cd', 'armproof-fleet-As4dFg', 'radiance-ref-xY12zw', staging])
    expect(strays(dir)).toEqual([staging, 'armproof-fleet-As4dFg', 'armproof-plan-Ab12Cd', 'radiance-ref-xY12zw'])
  })

  test('a folder with only the kept caches is checked: a teardown that passes while nothing is added, and is red naming what was left', () => {
    const dir = fakeTmp(KEPT)
    const teardown = tempCheck(dir)
    expect(teardown).toBeTypeOf('function')
    expect(() => teardown!()).not.toThrow()
    for (const name of ['armproof-run-Qw3rTy', 'armproof-fleet-As4dFg']) mkdirSync(join(dir, name))
    expect(() => teardown!()).toThrow(
      `the tests left 2 entries in the temp folder ${dir} (expected: none but the caches kept on purpose): armproof-fleet-As4dFg, armproof-run-Qw3rTy; next:`,
    )
    expect(() => teardown!()).toThrow(/tempDir\(\) in test\/support\/temp-dir\.ts, or an afterAll of the file$/)
  })

  test('a folder that others write to (anything there already at the start) is not checked', () => {
    expect(tempCheck(fakeTmp([...KEPT, 'systemd-private-abc']))).toBeUndefined()
    expect(tempCheck(fakeTmp(['armproof-plan-Ab12Cd']))).toBeUndefined()
  })

  test('a long list is cut to its first 20 names and how many more', () => {
    const left = Array.from({ length: 23 }, (_, i) => `armproof-plan-${String(i).padStart(2, '0')}`)
    const message = leftMessage('/t', left)!
    expect(message).toContain('left 23 entries')
    expect(message).toContain('armproof-plan-19, … (3 more); next:')
    expect(message).not.toContain('armproof-plan-20')
    expect(leftMessage('/t', ['one'])).toContain('left 1 entry in')
    expect(leftMessage('/t', [])).toBeNull()
    expect(readdirSync(fakeTmp([]))).toEqual([])
  })
})

describe("pnpm test's temp folder (test/support/temp-root.ts)", () => {
  test("on a tmpfs with room, a folder of the user's own under it (0711), the same each time; elsewhere none", () => {
    const onDisk = tempDir('armproof-not-tmpfs-')
    // A temp folder on a disk is no tmpfs: the system's temp folder stays.
    if (statfsSync(onDisk).type !== 0x01021994) expect(sharedTempRoot(onDisk)).toBeNull()
    const shm = '/dev/shm'
    const tmpfs = existsSync(shm) && statfsSync(shm).type === 0x01021994
    const root = sharedTempRoot()
    if (tmpfs && statfsSync(shm).bavail * statfsSync(shm).bsize >= 2 * 2 ** 30) {
      expect(root).toBe(sharedTempPath())
      expect(ours(root!)).toBe(true)
      expect(sharedTempRoot()).toBe(root)
    } else expect(root).toBeNull()
  })

  test('refuses a folder others may write, and a link where the folder should be', () => {
    const dir = tempDir('armproof-temp-root-')
    const open = join(dir, 'open')
    mkdirSync(open)
    chmodSync(open, 0o777)
    expect(ours(open)).toBe(false)
    const link = join(dir, 'link')
    mkdirSync(join(dir, 'target'), { mode: 0o700 })
    symlinkSync(join(dir, 'target'), link)
    expect(ours(link)).toBe(false)
    expect(ours(join(dir, 'target'))).toBe(true)
  })

  test('the check of a TMPDIR of its own leaves the shared folder alone (other runs write there), and checks a folder of its own', () => {
    const own = fakeTmp(KEPT)
    vi.stubEnv('TMPDIR', sharedTempPath()!)
    try {
      expect(setup()).toBeUndefined()
      vi.stubEnv('TMPDIR', own)
      expect(setup()).toBeTypeOf('function')
    } finally {
      vi.unstubAllEnvs()
    }
  })
})
