// Which test files `pnpm test:fast` runs (vitest.config.ts's `fast` project): every file under test/
// that starts no real or emulated component beside the tests, neither itself nor through the
// test/support modules it imports: no child engine (startEngine, the demo), no sshd or system user,
// no Prometheus or promtool, no podman, no real llama-server. The rule reads the files' own text,
// so a file that starts one is out of the fast loop the moment it does (test/repo/fast.test.ts
// checks the rule on the files as they are and on files made to break it). A few files that start
// none but take long (many armproof processes, idle timers, CI linters) are left out too, by name
// (LONG), so that the loop stays within 20 s; `pnpm test` runs every file.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** The functions that start a component, and what each starts. */
export const STARTERS: Readonly<Record<string, string>> = {
  startEngine: 'a child engine (engine/launch.ts)',
  startSshd: 'sshd',
  createUser: 'a system user (for sshd)',
  startPrometheus: 'Prometheus',
  promtool: 'promtool',
  startLlama: 'the real llama-server',
}

/**
 * Files that start no component but take long: each one's duration in `pnpm test:fast` on 2 busy
 * cores (2026-12-02) and what it waits on. Out of the fast loop; `pnpm test` runs them.
 */
export const LONG: Readonly<Record<string, string>> = {
  'test/cli/verify-host.test.ts': '31 s: verify hosts started, idled out and timed out (real timers)',
  'test/repo/ci-examples.test.ts': '17 s: gitlab-ci-local and action-validator over every CI example',
  'test/e2e/conventions.test.ts': '16 s: whole verify, writeback, merge-reports, serve and effect processes',
  'test/e2e/mistakes-later.test.ts': '14 s: mistakes met after first contact, each through a whole verify',
  'test/seams/read-ahead-cancel.test.ts': '12 s: host programs cancelled mid-run, waited out to their process groups',
  'test/bin/compile-cache.test.ts': '7 s: node processes started cold and warm',
}

/** A program started by name: a component, or a command that starts one (the demo starts an engine). */
const SPAWN = String.raw`\b(?:execa|execaNode|spawn|spawnSync|execFile|execFileSync|fork)\(`
const PROGRAMS = new RegExp(`${SPAWN}\\s*['"\`](?:podman|docker|sshd|ssh|useradd|prometheus|promtool|llama-server)\\b`)
const STARTS_DEMO = new RegExp(
  `${SPAWN}[^;]{0,300}?['"\`](?:[^'"\`]*/)?(?:bin/demo\\.ts|bootstrap\\.sh|engine/launch\\.ts|scripts/image\\.sh)['"\`]`,
)

/** The code of a file without its comments (a comment may name a starter it does not call). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1')
}

/** What in this file's own code starts a component, or undefined. */
export function startsHere(text: string): string | undefined {
  const c = code(text)
  for (const [name, what] of Object.entries(STARTERS))
    if (new RegExp(`(?<!function\\s+)\\b${name}\\s*\\(`).test(c)) return `calls ${name} (${what})`
  const program = PROGRAMS.exec(c)
  if (program) return `starts ${program[0].replace(/^.*\(\s*/, '')}…`
  const demo = STARTS_DEMO.exec(c)
  if (demo) return `starts ${demo[0]}`
  return undefined
}

/** The files under test/ a file imports (relative imports that stay in test/). */
function testImports(file: string, text: string): string[] {
  return [...code(text).matchAll(/(?:\bfrom|\bimport\(?)\s*['"](\.{1,2}\/[^'"]+\.ts)['"]/g)]
    .map((m) => relative(ROOT, resolve(dirname(join(ROOT, file)), m[1]!)))
    .filter((f) => f.startsWith('test/'))
}

function testFiles(dir = join(ROOT, 'test')): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => (e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [relative(ROOT, join(dir, e.name))] : []))
}

/**
 * Each test file (`*.test.ts`) and why it is out of the fast loop (the chain of imports to what
 * starts a component), or null when it is in. `sources` stands for the files of test/ (the tests
 * give their own).
 */
export function classify(
  sources: ReadonlyMap<string, string> = new Map(testFiles().map((f) => [f, readFileSync(join(ROOT, f), 'utf8')])),
): Map<string, string | null> {
  const memo = new Map<string, string | null>()
  const why = (file: string, path: readonly string[]): string | null => {
    if (memo.has(file)) return memo.get(file)!
    if (path.includes(file)) return null
    const text = sources.get(file)
    if (text === undefined) return null
    let reason = startsHere(text) ?? null
    if (reason === null)
      for (const dep of testImports(file, text)) {
        const r = why(dep, [...path, file])
        if (r !== null) {
          reason = `imports ${dep}, which ${r}`
          break
        }
      }
    memo.set(file, reason)
    return reason
  }
  return new Map(
    [...sources.keys()].filter((f) => f.endsWith('.test.ts')).map((f) => [f, why(f, []) ?? (LONG[f] ? `takes long: ${LONG[f]}` : null)]),
  )
}

/** The test files of the fast loop, repository-relative. */
export function fastFiles(): string[] {
  return [...classify()].flatMap(([f, why]) => (why === null ? [f] : []))
}
