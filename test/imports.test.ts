// The product's import graph: no cycle, and nothing of the product reaches into recorded data,
// the tests or the maintenance scripts. The graph is read from the sources themselves (static
// imports, `export … from`, and `import('…')` with a literal path), type-only imports included.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
/** What ships in the package (tsconfig.build.json) and what `pnpm verify` runs. */
const PRODUCT = ['bin', 'helpers', 'suites', 'engine']

function sources(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ts|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))
}

const SPECIFIER = /(?:^|\n)\s*(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]|(?:^|\n)\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g

/** The repository-relative files one source imports (relative specifiers only; packages are not ours). */
export function importsOf(file: string, text: string): string[] {
  const out: string[] = []
  for (const m of text.matchAll(SPECIFIER)) {
    const spec = m[1] ?? m[2] ?? m[3]!
    if (spec.startsWith('.')) out.push(normalize(join(dirname(file), spec)))
  }
  return out
}

/** Every cycle's path, as `a → b → a`, found by a depth-first walk. */
export function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const state = new Map<string, 'open' | 'done'>()
  const stack: string[] = []
  const found: string[] = []
  const visit = (node: string): void => {
    state.set(node, 'open')
    stack.push(node)
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next].join(' → '))
      else if (!state.has(next)) visit(next)
    }
    stack.pop()
    state.set(node, 'done')
  }
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node)
  return found
}

const files = PRODUCT.flatMap(sources)
const graph = new Map(files.map((f) => [f, importsOf(f, readFileSync(join(ROOT, f), 'utf8'))]))

describe("the product's import graph", () => {
  test('is read from every product source (a walk that finds nothing proves nothing)', () => {
    expect(files.length).toBeGreaterThan(60)
    expect(graph.get('suites/arm.test.ts')).toContain('helpers/steps/runbook.ts')
  })

  test('has no cycle', () => {
    expect(cyclesOf(graph)).toEqual([])
  })

  test('imports only files that exist', () => {
    const known = new Set(files)
    const missing = [...graph].flatMap(([f, deps]) => deps.filter((d) => !known.has(d) && !d.endsWith('.json')).map((d) => `${f} → ${d}`))
    expect(missing).toEqual([])
  })

  test('never reaches into fixtures/, test/ or scripts/', () => {
    const outside = [...graph].flatMap(([f, deps]) => deps.filter((d) => /^(fixtures|test|scripts)\//.test(d)).map((d) => `${f} → ${d}`))
    expect(outside).toEqual([])
  })

  test('keeps the reference engine out of the helpers and the suites (only the demo command starts it)', () => {
    const engineUsers = [...graph].filter(([f, deps]) => !f.startsWith('engine/') && deps.some((d) => d.startsWith('engine/'))).map(([f]) => f)
    expect(engineUsers).toEqual(['bin/demo.ts'])
  })

  test('keeps armproof out of the reference engine: it stands for an engine of its own, judged from outside', () => {
    const reaching = [...graph].flatMap(([f, deps]) => (f.startsWith('engine/') ? deps.filter((d) => !d.startsWith('engine/') && !d.endsWith('.json')).map((d) => `${f} → ${d}`) : []))
    expect(reaching).toEqual([])
  })
})

describe('the cycle finder', () => {
  test('names a two-file cycle and a self-import, and passes a diamond', () => {
    expect(cyclesOf(new Map([['a', ['b']], ['b', ['a']]]))).toEqual(['a → b → a'])
    expect(cyclesOf(new Map([['a', ['a']]]))).toEqual(['a → a'])
    expect(cyclesOf(new Map([['a', ['b', 'c']], ['b', ['d']], ['c', ['d']], ['d', []]]))).toEqual([])
  })

  test('reads static, type-only, re-export and literal dynamic imports', () => {
    const text = "import { x } from './a.ts'\nimport type { Y } from '../b.ts'\nexport { z } from './c/d.ts'\nconst m = await import('./e.ts')\nimport 'node:fs'\n"
    expect(importsOf('helpers/f.ts', text)).toEqual(['helpers/a.ts', 'b.ts', 'helpers/c/d.ts', 'helpers/e.ts'])
  })
})
