// Tests that need something from the machine say so: outside CI they are reported as not run,
// with what is missing and what to install; under CI=true they fail with the same words. Proven
// on probe test files run by a child vitest, one whose prerequisite is missing and one whose is not.
// Also the harness's own pieces: the closing line, and the bound on the tests' compile cache.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { execa } from 'execa'
import { afterAll, describe, expect, test, vi } from 'vitest'
import type { TestModule } from 'vitest/node'
import ClosingLine from '../support/closing-line.ts'
import { cacheEntries, pruneCompileCache } from '../support/compile-cache.ts'
import { check, PROMETHEUS, SSH_CLIENT, SUDO, type Prerequisite } from '../support/prerequisites.ts'
import { ROOT } from '../support/run-verify.ts'

const present: Prerequisite = { name: 'a tool that is there', install: 'apt-get install there', check: () => undefined }
const absent: Prerequisite = { name: 'the probe tool', install: 'apt-get install probe-tool', check: () => 'probe-tool not on PATH' }
const absentToo: Prerequisite = { name: 'the other tool', install: 'apt-get install probe-tool', check: () => '/usr/sbin/other is missing' }

describe('check', () => {
  test('everything there: nothing missing, no reason', () => {
    expect(check(present)).toEqual({ missing: [], reason: '' })
  })

  test('the reason names each missing thing with what was found, and each install once', () => {
    const needs = check(present, absent, absentToo)
    expect(needs.missing.map((m) => m.prerequisite.name)).toEqual(['the probe tool', 'the other tool'])
    expect(needs.reason).toBe(
      'needs the probe tool (probe-tool not on PATH), the other tool (/usr/sbin/other is missing); to run these tests: apt-get install probe-tool',
    )
  })

  test('with nothing on PATH, the checks that look there name what they did not find', () => {
    const saved = process.env.PATH
    process.env.PATH = ''
    try {
      expect(SSH_CLIENT.check()).toBe('ssh and ssh-keygen not on PATH')
      expect(SUDO.check()).toBe('sudo not on PATH')
      expect(PROMETHEUS.check()).toBe('prometheus and promtool not on PATH')
    } finally {
      process.env.PATH = saved
    }
  })
})

describe('a test file with a missing prerequisite, run by vitest', () => {
  // Under the checkout (gitignored .tmp/) so the probes resolve vitest from its node_modules.
  mkdirSync(join(ROOT, '.tmp'), { recursive: true })
  const dir = mkdtempSync(join(ROOT, '.tmp', 'prereq-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const support = pathToFileURL(join(ROOT, 'test/support/prerequisites.ts')).href
  const probe = (name: string, prerequisite: string) =>
    writeFileSync(
      join(dir, `${name}.test.ts`),
      [
        `import { expect, test } from 'vitest'`,
        `import { check, requires } from ${JSON.stringify(support)}`,
        `let started = false`,
        `const ready = requires(check(${prerequisite}))`,
        `test('first', () => { started = ready; expect(1).toBe(1) })`,
        `test('second', () => { expect(started).toBe(true) })`,
        '',
      ].join('\n'),
    )
  probe('missing', `{ name: 'the probe tool', install: 'apt-get install probe-tool', check: () => 'probe-tool not on PATH' }`)
  probe('present', `{ name: 'a tool that is there', install: 'apt-get install there', check: () => undefined }`)
  // One test of the file needs the tool (testRequiring), the other runs anyway.
  writeFileSync(
    join(dir, 'partial.test.ts'),
    [
      `import { expect, test } from 'vitest'`,
      `import { check, testRequiring } from ${JSON.stringify(support)}`,
      `const probeTest = testRequiring(check({ name: 'the probe tool', install: 'apt-get install probe-tool', check: () => 'probe-tool not on PATH' }))`,
      `probeTest('needs the tool', () => { expect(1).toBe(1) })`,
      `test('does not', () => { expect(1).toBe(1) })`,
      '',
    ].join('\n'),
  )
  const config = join(dir, 'vitest.config.mjs')
  writeFileSync(
    config,
    `export default { test: { include: ['*.test.ts'], reporters: ['default', ${JSON.stringify(join(ROOT, 'test/support/closing-line.ts'))}] } }\n`,
  )
  const run = (ci: string) =>
    execa(process.execPath, [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--root', dir, '--config', config], {
      cwd: dir,
      reject: false,
      env: { CI: ci },
      stdin: 'ignore',
      all: true,
    })

  test('outside CI: not run, with the reason and what to install; the file whose prerequisite is there runs', async () => {
    const result = await run('')
    const out = String(result.all)
    expect(result.exitCode, out).toBe(0)
    expect(out).toContain(
      '2 test(s) in missing.test.ts: not run: needs the probe tool (probe-tool not on PATH); to run these tests: apt-get install probe-tool',
    )
    expect(out).toContain(
      '1 test(s) in partial.test.ts: not run: needs the probe tool (probe-tool not on PATH); to run these tests: apt-get install probe-tool',
    )
    expect(out).toMatch(/^tests: 3 passed, 0 failed, 3 skipped$/m)
  })

  test('under CI=true: a missing prerequisite fails, with the same words', async () => {
    const result = await run('true')
    const out = String(result.all)
    expect(result.exitCode, out).toBe(1)
    expect(out).toContain(
      'CI=true and a prerequisite is missing: needs the probe tool (probe-tool not on PATH); to run these tests: apt-get install probe-tool',
    )
    expect(out.match(/CI=true and a prerequisite is missing/g)?.length, out).toBeGreaterThanOrEqual(3)
    expect(out).toMatch(/^tests: 3 passed, 3 failed, 0 skipped$/m)
  })
})

describe('the closing line', () => {
  /** What ClosingLine reads of a test module (vitest's TestModule), for one file. */
  const file = (state: 'passed' | 'failed', tests: Array<'passed' | 'failed' | 'skipped'>) =>
    ({
      state: () => state,
      relativeModuleId: 'x.test.ts',
      children: { allTests: () => tests.map((s) => ({ result: () => ({ state: s }) })) },
    }) as unknown as TestModule
  const line = (modules: TestModule[], unhandled: unknown[] = []): string => {
    let out = ''
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((out += String(chunk)), true))
    try {
      new ClosingLine().onTestRunEnd(modules, unhandled)
    } finally {
      spy.mockRestore()
    }
    return out.trim()
  }

  test('counts the tests; a file that failed outside its tests (its tests skipped) and an error outside any test are counted too, never read as all passed', () => {
    expect(line([file('passed', ['passed', 'skipped'])])).toBe('tests: 1 passed, 0 failed, 1 skipped')
    expect(line([file('failed', ['passed', 'failed'])])).toBe('tests: 1 passed, 1 failed, 0 skipped')
    expect(line([file('passed', ['passed']), file('failed', ['skipped', 'skipped'])])).toBe(
      'tests: 1 passed, 0 failed, 2 skipped, 1 file(s) failed outside their tests',
    )
    expect(line([file('passed', ['passed'])], [new Error('late')])).toBe(
      'tests: 1 passed, 0 failed, 0 skipped, 1 error(s) outside any test',
    )
  })
})

describe("the tests' compile cache", () => {
  test('is emptied once it holds more entries than the bound, and left alone below it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'armproof-cc-'))
    try {
      mkdirSync(join(dir, 'v24-x64'))
      for (let i = 0; i < 5; i++) writeFileSync(join(dir, 'v24-x64', `e${i}`), '')
      expect(cacheEntries(dir)).toBe(5)
      expect(pruneCompileCache(dir, 5)).toBe(false)
      expect(cacheEntries(dir)).toBe(5)
      writeFileSync(join(dir, 'v24-x64', 'e5'), '')
      expect(pruneCompileCache(dir, 5)).toBe(true)
      expect(existsSync(dir)).toBe(false)
      expect(pruneCompileCache(dir, 5)).toBe(false)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
