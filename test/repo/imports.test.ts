// The product's import graph: its folders form layers (a folder imports its own files and the
// layers below it, never one above), so there is no cycle, and nothing of the product reaches into
// recorded data, the tests or the maintenance scripts. The graph is read from the sources
// themselves (static imports, `export … from`, and `import('…')` with a literal path), type-only
// imports included: a type that points up ties the layers together as much as a value does.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
/** What ships in the package (tsconfig.build.json) and what `pnpm verify` runs. */
const PRODUCT = ['bin', 'helpers', 'suites', 'engine']

function sources(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ts|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))
}

const SPECIFIER =
  /(?:^|\n)\s*(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]|(?:^|\n)\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g

/** The repository-relative files one source imports (relative specifiers only; packages are not ours). */
function importsOf(file: string, text: string): string[] {
  const out: string[] = []
  for (const m of text.matchAll(SPECIFIER)) {
    const spec = m[1] ?? m[2] ?? m[3]!
    if (spec.startsWith('.')) out.push(normalize(join(dirname(file), spec)))
  }
  return out
}

/** Every cycle's path, as `a → b → a`, found by a depth-first walk. */
function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[] {
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

/**
 * The layers, top to bottom (docs/design/layers.md, Layout): a file may import files of its own layer and of the
 * layers below it. A layer is a top-level folder, or a folder of helpers/. The reference engine sits
 * right under bin/ (only the demo command starts it) and reaches nothing of armproof's (below).
 */
const LAYERS: readonly (readonly string[])[] = [
  ['bin'],
  ['engine'],
  ['suites'],
  ['helpers/serve'],
  ['helpers/effect'],
  ['helpers/writeback'],
  ['helpers/cli'],
  ['helpers/fleet'],
  ['helpers/report'],
  ['helpers/steps'],
  ['helpers/engine'],
  ['helpers/seams'],
  ['helpers/config'],
  ['helpers/profiles'],
  ['helpers/argparse'],
  ['helpers/prom', 'helpers/schema'],
]

/** The layer a repository-relative file belongs to: its top-level folder, or its folder of helpers/; undefined for a file in none. */
function layerOf(file: string): string | undefined {
  const parts = file.split('/')
  const folder = parts[0] === 'helpers' ? (parts.length > 2 ? `helpers/${parts[1]}` : undefined) : parts.length > 1 ? parts[0] : undefined
  return folder !== undefined && LAYERS.some((l) => l.includes(folder)) ? folder : undefined
}

/** Every import that points up the layers or out of them, as `file → file: why`; data files (JSON) are not layered. */
function layerBreaches(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const rank = (layer: string): number => LAYERS.findIndex((l) => l.includes(layer))
  const where = (layer: string): string => `${layer}/ (layer ${rank(layer) + 1} of ${LAYERS.length})`
  const found: string[] = []
  for (const [file, deps] of graph) {
    const from = layerOf(file)
    if (from === undefined) {
      found.push(`${file}: in no layer (docs/design/layers.md, Layout: place its folder in the order)`)
      continue
    }
    for (const dep of deps) {
      if (dep.endsWith('.json')) continue
      const to = layerOf(dep)
      if (to === undefined) found.push(`${file} → ${dep}: ${where(from)} imports a file in no layer`)
      else if (rank(to) < rank(from)) found.push(`${file} → ${dep}: ${where(from)} reaches up to ${where(to)}`)
    }
  }
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

  test('keeps every import, type-only ones included, within its layer or pointing down', () => {
    expect(layerBreaches(graph)).toEqual([])
  })

  test('has no cycle between folders either: the layers order them', () => {
    const folders = new Map<string, Set<string>>()
    for (const [f, deps] of graph)
      for (const d of deps)
        if (!d.endsWith('.json') && layerOf(f) !== layerOf(d))
          folders.set(layerOf(f)!, (folders.get(layerOf(f)!) ?? new Set()).add(layerOf(d)!))
    expect(folders.size).toBeGreaterThan(10)
    expect(cyclesOf(new Map([...folders].map(([k, v]) => [k, [...v]])))).toEqual([])
  })

  test('places every folder: each product file is in a layer, and each layer is a folder that exists', () => {
    expect(files.filter((f) => layerOf(f) === undefined)).toEqual([])
    const present = new Set(files.map(layerOf))
    expect(LAYERS.flat().filter((l) => !present.has(l))).toEqual([])
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
    const engineUsers = [...graph]
      .filter(([f, deps]) => !f.startsWith('engine/') && deps.some((d) => d.startsWith('engine/')))
      .map(([f]) => f)
    expect(engineUsers).toEqual(['bin/demo.ts'])
  })

  test('keeps armproof out of the reference engine: it stands for an engine of its own, judged from outside', () => {
    const reaching = [...graph].flatMap(([f, deps]) =>
      f.startsWith('engine/') ? deps.filter((d) => !d.startsWith('engine/') && !d.endsWith('.json')).map((d) => `${f} → ${d}`) : [],
    )
    expect(reaching).toEqual([])
  })
})

describe("docs/design/layers.md's Layout", () => {
  const readme = readFileSync(join(ROOT, 'docs/design/layers.md'), 'utf8')
  const layout = readme.slice(readme.indexOf('\n## Layout\n'), readme.indexOf('\n## ', readme.indexOf('\n## Layout\n') + 1))
  /** Each layer's row: the folders its "reaches" cell names (only a layer's folder counts: `helpers/x/`, `bin/`, …). */
  const rows = new Map(
    layout
      .split('\n')
      .map((line) => line.split(' | '))
      .filter((cells) => cells.length >= 3 && LAYERS.flat().some((l) => cells[0] === `| \`${l}/\``))
      .map((cells) => [
        cells[0]!.slice(3, -2),
        [...new Set([...cells.at(-1)!.matchAll(/`([a-z/]+)\/`/g)].map((m) => m[1]!))].filter((f) => LAYERS.flat().includes(f)).sort(),
      ]),
  )

  test('says the order, top to bottom, as the layer rule has it', () => {
    expect(layout).toContain(LAYERS.map((l) => l.map((f) => `\`${f}/\``).join(', ')).join(' → '))
    expect([...rows.keys()]).toEqual(LAYERS.flat())
  })

  test('says what each folder reaches, as its imports do', () => {
    const reached = new Map(LAYERS.flat().map((l) => [l, new Set<string>()]))
    for (const [f, deps] of graph)
      for (const d of deps) if (!d.endsWith('.json') && layerOf(d) !== layerOf(f)) reached.get(layerOf(f)!)!.add(layerOf(d)!)
    expect(Object.fromEntries(rows)).toEqual(Object.fromEntries([...reached].map(([l, to]) => [l, [...to].sort()])))
  })
})

describe('the layer rule', () => {
  // A module low in the stack that points up, in each way an import can be written, among imports
  // that are fine; a file that sits in no layer; and one that imports outside every layer.
  const text = [
    "import { parseMatch } from '../prom/query.ts'",
    "import type { X } from '../cli/verify.ts'",
    "export { judgeRun } from '../steps/verdict.ts'",
    "export const forTests = () => import('../report/json.ts')",
    "import pkg from '../../package.json' with { type: 'json' }",
  ].join('\n')
  const synthetic = new Map([
    ['helpers/config/low.ts', importsOf('helpers/config/low.ts', text)],
    ['helpers/cli/verify.ts', ['helpers/config/low.ts', 'helpers/steps/first-contact/contact.ts']],
    ['helpers/steps/first-contact/contact.ts', ['helpers/steps/verdict.ts', 'helpers/seams/http.ts']],
    ['helpers/stray.ts', []],
    ['helpers/seams/http.ts', ['test/support/fake.ts']],
  ])

  test('names each import that points up, type-only, re-export and dynamic alike, with both layers', () => {
    expect(layerBreaches(synthetic)).toEqual([
      'helpers/config/low.ts → helpers/cli/verify.ts: helpers/config/ (layer 13 of 16) reaches up to helpers/cli/ (layer 7 of 16)',
      'helpers/config/low.ts → helpers/steps/verdict.ts: helpers/config/ (layer 13 of 16) reaches up to helpers/steps/ (layer 10 of 16)',
      'helpers/config/low.ts → helpers/report/json.ts: helpers/config/ (layer 13 of 16) reaches up to helpers/report/ (layer 9 of 16)',
      'helpers/stray.ts: in no layer (docs/design/layers.md, Layout: place its folder in the order)',
      'helpers/seams/http.ts → test/support/fake.ts: helpers/seams/ (layer 12 of 16) imports a file in no layer',
    ])
  })

  test('passes imports down, within a layer (its subfolders too), and of data', () => {
    expect(layerBreaches(new Map([...synthetic].slice(1, 3)))).toEqual([])
    expect(layerOf('helpers/steps/meter/ladder.ts')).toBe('helpers/steps')
    expect(layerOf('suites/arm.test.ts')).toBe('suites')
    expect(layerOf('helpers/stray.ts')).toBeUndefined()
  })
})

describe('the cycle finder', () => {
  test('names a two-file cycle and a self-import, and passes a diamond', () => {
    expect(
      cyclesOf(
        new Map([
          ['a', ['b']],
          ['b', ['a']],
        ]),
      ),
    ).toEqual(['a → b → a'])
    expect(cyclesOf(new Map([['a', ['a']]]))).toEqual(['a → a'])
    expect(
      cyclesOf(
        new Map([
          ['a', ['b', 'c']],
          ['b', ['d']],
          ['c', ['d']],
          ['d', []],
        ]),
      ),
    ).toEqual([])
  })

  test('reads static, type-only, re-export and literal dynamic imports', () => {
    const text =
      "import { x } from './a.ts'\nimport type { Y } from '../b.ts'\nexport { z } from './c/d.ts'\nconst m = await import('./e.ts')\nimport 'node:fs'\n"
    expect(importsOf('helpers/f.ts', text)).toEqual(['helpers/a.ts', 'b.ts', 'helpers/c/d.ts', 'helpers/e.ts'])
  })
})
