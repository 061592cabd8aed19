// The fast loop (`pnpm test:fast`, vitest's `fast` project) holds no file that starts a component:
// the rule of test/support/fast.ts over the files as they are, the project's include equal to what
// the rule picks, and the rule itself against files written to break it.
import { readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import config from '../../vitest.config.ts'
import { existsSync } from 'node:fs'
import { classify, fastFiles, LONG, startsHere } from '../support/fast.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

describe('the fast project', () => {
  const picked = fastFiles()

  test('runs exactly the files the rule picks, a part of the unit project', () => {
    const projects = (config.test?.projects ?? []) as Array<{ test: { name: string; include: string[] } }>
    const fast = projects.find((p) => p.test.name === 'fast')!
    expect(fast.test.include).toEqual(picked)
    expect(projects.find((p) => p.test.name === 'unit')!.test.include).toEqual(['test/**/*.test.ts'])
    expect(picked.length).toBeGreaterThan(60)
  })

  test('no file in it, nor any test/ module it imports, starts an engine, sshd, podman, Prometheus or llama-server', () => {
    const starting: string[] = []
    const seen = new Set<string>()
    const visit = (file: string): void => {
      if (seen.has(file) || !existsSync(join(ROOT, file))) return
      seen.add(file)
      const text = readFileSync(join(ROOT, file), 'utf8')
      const why = startsHere(text)
      if (why) starting.push(`${file}: ${why}`)
      for (const m of text.matchAll(/from\s+['"](\.{1,2}\/[^'"]+\.ts)['"]/g)) {
        const dep = relative(ROOT, resolve(dirname(join(ROOT, file)), m[1]!))
        if (dep.startsWith('test/')) visit(dep)
      }
    }
    for (const f of picked) visit(f)
    expect(starting).toEqual([])
  })

  test('leaves out the files that start them', () => {
    const all = classify()
    for (const file of [
      'test/e2e/fault-matrix.test.ts',
      'test/e2e/ssh.test.ts',
      'test/e2e/prometheus-verify.test.ts',
      'test/effect/prometheus.test.ts',
      'test/real/llama-server.test.ts',
      'test/repo/bootstrap.test.ts',
      'test/serve/http.test.ts',
    ])
      expect(all.get(file), file).toEqual(expect.any(String))
    // The files left out for their time alone name files that exist, and are left out.
    for (const file of Object.keys(LONG)) {
      expect(existsSync(join(ROOT, file)), file).toBe(true)
      expect(picked).not.toContain(file)
    }
  })
})

describe('the rule', () => {
  const files = (sources: Record<string, string>) => classify(new Map(Object.entries(sources)))

  test('follows imports through test/support, and names the chain', () => {
    expect(
      files({
        'test/a.test.ts': "import { row } from './support/rows.ts'\nimport { x } from '../helpers/x.ts'",
        'test/support/rows.ts': "import { startEngine } from '../../engine/launch.ts'\nexport const row = () => startEngine({})",
        'test/b.test.ts': "import { y } from './support/plain.ts'",
        'test/support/plain.ts': 'export const y = 1',
      }),
    ).toEqual(
      new Map([
        ['test/a.test.ts', 'imports test/support/rows.ts, which calls startEngine (a child engine (engine/launch.ts))'],
        ['test/b.test.ts', null],
      ]),
    )
  })

  test('catches a component started by name or through a script, and not a comment or a definition', () => {
    expect(startsHere("await execa('podman', ['run'])")).toMatch(/podman/)
    expect(startsHere('const p = spawn(`prometheus`, args)')).toMatch(/prometheus/)
    expect(startsHere("execa(process.execPath, [join(ROOT, 'bin/demo.ts'), '--engine', 'vllm'])")).toMatch(/bin\/demo\.ts/)
    expect(startsHere("execa('sh', [join(repo, 'bootstrap.sh'), 'demo'])")).toMatch(/bootstrap\.sh/)
    expect(startsHere('const s = await startSshd()')).toMatch(/sshd/)
    expect(startsHere('// startEngine() would start one\n/* startPrometheus() */')).toBeUndefined()
    expect(startsHere('export async function startEngine(o) {}')).toBeUndefined()
    expect(startsHere("const argv = ['--svc', 'demo', '--knob', 'X']")).toBeUndefined()
  })
})
