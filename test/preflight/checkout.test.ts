// preflight.checkout against real git checkouts: on main and clean is green; another branch, a
// detached HEAD, a changed file, an untracked file (even in a new folder) are each red with what
// to fix; no checkout at all is red; a folder with a hostile name is quoted, never run.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { createHost } from '../../helpers/seams/host.ts'
import { judgeCheckout } from '../../helpers/steps/preflight/checkout.ts'
import { git, gitCheckout } from '../support/git-checkout.ts'
import { tempDir } from '../support/temp-dir.ts'

const local = createHost({ host: { kind: 'local' }, sshOpts: [], deployUser: null })
const check = (dir: string) => judgeCheckout(local, dir, 10_000)

describe.concurrent('preflight.checkout', () => {
  test('on main with nothing changed and nothing untracked: passed', async () => {
    const dir = gitCheckout({ 'deploy.sh': 'echo deploy\n', 'env/llm-7.env': 'PREFILL_INTERLEAVE=1\n' })
    const j = await check(dir)
    expect(j.verdict, j.observed).toBe('passed')
    expect(j.observed).toMatch(/on main at [0-9a-f]{7,}, git status --porcelain --untracked-files=all prints nothing/)
    expect(j.where).toContain('git status --porcelain --untracked-files=all')
  })

  test('on another branch: failed, naming it, next: switch to main', async () => {
    const dir = gitCheckout({ 'deploy.sh': 'x\n' }, 'bench-7')
    const j = await check(dir)
    expect(j.verdict).toBe('failed')
    expect(j.observed).toContain('on branch bench-7')
    expect(j.next).toMatch(/^do not deploy: switch the checkout to main \(git switch main/)
    expect(j.evidence).toMatchObject({ branch: 'bench-7', changed: [], untracked: [] })
  })

  test('a detached HEAD: failed, naming the commit', async () => {
    const dir = gitCheckout({ 'deploy.sh': 'x\n' })
    const head = git(dir, 'rev-parse', '--short', 'HEAD').trim()
    git(dir, 'checkout', '-q', '--detach')
    const j = await check(dir)
    expect(j.verdict).toBe('failed')
    expect(j.observed).toContain(`HEAD is detached at ${head}`)
  })

  test('a modified file: failed, naming it, next: commit or remove it', async () => {
    const dir = gitCheckout({ 'deploy.sh': 'x\n', 'env/a.env': 'A=1\n' })
    writeFileSync(join(dir, 'env/a.env'), 'A=2\n')
    const j = await check(dir)
    expect(j.verdict).toBe('failed')
    expect(j.observed).toContain('1 changed and 0 untracked files:  M env/a.env')
    expect(j.next).toContain('git stash -u')
  })

  test('an untracked file in a new folder counts (--untracked-files=all names the file, not the folder)', async () => {
    const dir = gitCheckout({ 'deploy.sh': 'x\n' })
    mkdirSync(join(dir, 'notes'))
    writeFileSync(join(dir, 'notes/bench.txt'), 'scratch\n')
    const j = await check(dir)
    expect(j.verdict).toBe('failed')
    expect(j.observed).toContain('0 changed and 1 untracked file: ?? notes/bench.txt')
    expect(j.evidence).toMatchObject({ untracked: ['?? notes/bench.txt'] })
  })

  test('another branch and a change at once: both named', async () => {
    const dir = gitCheckout({ 'deploy.sh': 'x\n' }, 'wip')
    writeFileSync(join(dir, 'deploy.sh'), 'y\n')
    const j = await check(dir)
    expect(j.verdict).toBe('failed')
    expect(j.observed).toMatch(/on branch wip; 1 changed/)
  })

  test('a folder that is no git checkout: failed, next: the dev checkout', async () => {
    const dir = tempDir('armproof-not-a-checkout-')
    const j = await check(dir)
    expect(j.verdict).toBe('failed')
    expect(j.observed).toMatch(/is not a git checkout: fatal: not a git repository/)
    expect(j.next).toContain('give --checkout the dev checkout')
  })

  test("a folder whose name holds shell syntax is quoted into git's script, never run", async () => {
    const parent = tempDir('armproof-hostile-')
    const sentinel = join(parent, 'sentinel')
    // $ARMPROOF_SENTINEL is the sentinel's path in the host's env: a name a shell ran would touch it.
    const dir = join(parent, 'x;touch "$ARMPROOF_SENTINEL";$(touch "$ARMPROOF_SENTINEL")`touch "$ARMPROOF_SENTINEL"`')
    mkdirSync(dir)
    git(dir, 'init', '-q', '-b', 'main')
    const hostile = createHost({ host: { kind: 'local' }, sshOpts: [], deployUser: null, env: { ARMPROOF_SENTINEL: sentinel } })
    const j = await judgeCheckout(hostile, dir, 10_000)
    expect(j.verdict, j.observed).toBe('passed')
    expect(existsSync(sentinel)).toBe(false)
  })
})
