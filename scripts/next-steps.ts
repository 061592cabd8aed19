// Every next step the product can print, read from its source: each `next:` property of an object
// literal under helpers/ (a step's result, a refusal, a failure), with the texts its expression can
// take. A string is itself; a template keeps its text and names each value it fills in as a
// placeholder (`<svc>`, `<port>`); a conditional or a fallback (`a ?? 'b'`) gives each branch; a
// call of a function or of an entry of a table of functions (`kubectlNext(kind, pod)`,
// `NEXT[r.failure](ctx, r)`) gives what each of its returns can give, each with its case; a constant
// gives its value. A `next` handed on from elsewhere (`next: proof.next`) adds nothing: its text is
// found where it was made. Read by scripts/reference-doc.ts for docs/troubleshooting.md.
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseAst } from 'rolldown/parseAst'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** One next step as the source writes it. */
export interface NextStep {
  /** The text, with each filled-in value as `<name>`. */
  text: string
  /** The repository-relative file it is written in. */
  file: string
  /** The function it is written in (the table entry or switch case that chose it, after a `·`). */
  where: string
  /** What leads to it, from the same object: its `observed`, `found`, `why` or `what`. */
  situation: string
  /** The verdict of the same object (`failed`, `inconclusive`), or a mistake (exit 2); '' when the object carries none. */
  verdict: string
}

// The AST is ESTree (oxc's, through rolldown); read loosely.
// biome-ignore lint/suspicious/noExplicitAny: a parser's tree, read by shape.
type Node = any

interface Declared {
  file: string
  node: Node
  name: string
}

function* walk(node: Node, parents: Node[] = []): Generator<[Node, Node[]]> {
  if (node === null || typeof node !== 'object') return
  if (Array.isArray(node)) {
    for (const n of node) yield* walk(n, parents)
    return
  }
  if (typeof node.type === 'string') yield [node, parents]
  const down = typeof node.type === 'string' ? [...parents, node] : parents
  for (const [k, v] of Object.entries(node)) if (k !== 'type' && v && typeof v === 'object') yield* walk(v, down)
}

const unwrap = (n: Node): Node =>
  n &&
  [
    'TSAsExpression',
    'TSSatisfiesExpression',
    'TSNonNullExpression',
    'ParenthesizedExpression',
    'ChainExpression',
    'TSTypeAssertion',
  ].includes(n.type)
    ? unwrap(n.expression)
    : n

const keyName = (p: Node): string | undefined =>
  p.key?.type === 'Identifier' ? p.key.name : typeof p.key?.value === 'string' ? p.key.value : undefined

/** A short name for a value filled into a template. */
function nameOf(e: Node): string {
  e = unwrap(e)
  if (e.type === 'Identifier') return e.name
  if (e.type === 'MemberExpression') return e.computed ? nameOf(e.object) : e.property.name
  if (e.type === 'CallExpression') {
    // Math.round(x / 1000), JSON.stringify(x): the value it is given.
    if (
      e.callee.type === 'MemberExpression' &&
      e.callee.object.type === 'Identifier' &&
      /^[A-Z]/.test(e.callee.object.name) &&
      e.arguments[0]
    )
      return nameOf(e.arguments[0])
    if (e.callee.type === 'MemberExpression' && !e.callee.computed) return nameOf(e.callee.object)
    if (e.arguments[0]) return nameOf(e.arguments[0])
    return e.callee.type === 'Identifier' ? e.callee.name : 'value'
  }
  if (e.type === 'BinaryExpression' || e.type === 'LogicalExpression') return nameOf(e.left)
  if (e.type === 'AwaitExpression') return nameOf(e.argument)
  if (e.type === 'ArrayExpression') return 'list'
  return 'value'
}

class Reader {
  readonly declared = new Map<string, Declared[]>()
  readonly found: NextStep[] = []
  private readonly depth: Node[] = []

  readonly files: ReadonlyMap<string, Node>

  constructor(files: ReadonlyMap<string, Node>) {
    this.files = files
    for (const [file, ast] of files)
      for (const [n] of walk(ast)) {
        if (n.type === 'FunctionDeclaration' && n.id) this.add(n.id.name, file, n)
        if (n.type === 'VariableDeclarator' && n.id?.type === 'Identifier' && n.init) this.add(n.id.name, file, n.init)
      }
  }

  private add(name: string, file: string, node: Node): void {
    this.declared.set(name, [...(this.declared.get(name) ?? []), { file, node, name }])
  }

  /** The declaration a name in `file` means: its own file's first, else the one of that name anywhere. */
  resolve(name: string, file: string): Declared | undefined {
    const all = this.declared.get(name) ?? []
    const own = all.filter((d) => d.file === file)
    if (own.length) return own[0]
    return all.length === 1 ? all[0] : undefined
  }

  /** A template or string as one text, each filled-in value a placeholder. */
  inline(e: Node, file: string): string {
    e = unwrap(e)
    if (e.type === 'Literal' && typeof e.value === 'string') return e.value
    if (e.type === 'TemplateLiteral')
      return e.quasis
        .map((q: Node, i: number) => q.value.cooked + (i < e.expressions.length ? this.filled(e.expressions[i], file) : ''))
        .join('')
    return `<${nameOf(e)}>`
  }

  private filled(e: Node, file: string): string {
    e = unwrap(e)
    // How a command is named: the installed command's words.
    if (e.type === 'CallExpression' && e.callee.type === 'Identifier' && e.callee.name === 'command' && e.arguments[0]?.type === 'Literal')
      return `armproof ${e.arguments[0].value}`
    if (e.type === 'Literal' && typeof e.value === 'string') return e.value
    if (e.type === 'TemplateLiteral') return this.inline(e, file)
    if (e.type === 'ConditionalExpression') {
      const [a, b] = [this.filled(e.consequent, file), this.filled(e.alternate, file)]
      return a === '' ? `[${b}]` : b === '' ? `[${a}]` : `[${a} | ${b}]`
    }
    return `<${nameOf(e)}>`
  }

  /** Every text an expression can take, each with the case that chose it. */
  texts(e: Node, file: string, via = ''): Array<{ text: string; via: string }> {
    e = unwrap(e)
    if (!e || this.depth.includes(e) || this.depth.length > 4) return []
    this.depth.push(e)
    try {
      if ((e.type === 'Literal' && typeof e.value === 'string') || e.type === 'TemplateLiteral')
        return [{ text: this.inline(e, file), via }]
      if (e.type === 'ConditionalExpression') return [...this.texts(e.consequent, file, via), ...this.texts(e.alternate, file, via)]
      if (e.type === 'LogicalExpression') return [...this.texts(e.left, file, via), ...this.texts(e.right, file, via)]
      if (e.type === 'Identifier') {
        const d = this.resolve(e.name, file)
        return d && d.node.type !== 'FunctionDeclaration' && !/Function/.test(d.node.type) ? this.texts(d.node, d.file, via) : []
      }
      if (e.type === 'CallExpression') return this.called(e, file, via)
      return []
    } finally {
      this.depth.pop()
    }
  }

  private called(e: Node, file: string, via: string): Array<{ text: string; via: string }> {
    const callee = unwrap(e.callee)
    // oneLine(x), escapeControls(x): the text passed through.
    if (callee.type === 'Identifier' && ['oneLine', 'escapeControls', 'String'].includes(callee.name))
      return this.texts(e.arguments[0], file, via)
    if (callee.type === 'Identifier') {
      const d = this.resolve(callee.name, file)
      if (!d) return []
      // kubectlNext('no-pod', pod): where the function switches on its argument, the case that literal takes.
      const literal = e.arguments.find((a: Node) => a.type === 'Literal' && typeof a.value === 'string')?.value
      const all = this.returns(d.node, d.file, via ? `${via} · ${callee.name}` : callee.name)
      const chosen = literal === undefined ? [] : all.filter((r) => r.via.endsWith(` · ${literal}`))
      return chosen.length ? chosen : all
    }
    // TABLE[key](…): every entry of the table.
    if (callee.type === 'MemberExpression' && callee.computed && unwrap(callee.object).type === 'Identifier') {
      const d = this.resolve(unwrap(callee.object).name, file)
      const table = d && unwrap(d.node)
      if (table?.type !== 'ObjectExpression') return []
      return table.properties.flatMap((p: Node) =>
        p.type === 'Property' ? this.returns(p.value, d!.file, `${unwrap(callee.object).name}.${keyName(p) ?? '?'}`) : [],
      )
    }
    return []
  }

  /** What a function's returns can give (its own, not those of functions inside it), each with its switch case. */
  private returns(fn: Node, file: string, via: string): Array<{ text: string; via: string }> {
    fn = unwrap(fn)
    if (!/Function/.test(fn.type)) return []
    if (fn.body.type !== 'BlockStatement') return this.texts(fn.body, file, via)
    const out: Array<{ text: string; via: string }> = []
    for (const [n, parents] of walk(fn.body)) {
      if (n.type !== 'ReturnStatement' || !n.argument) continue
      if (parents.some((p) => p !== fn && /Function/.test(p.type))) continue
      const kase = [...parents].reverse().find((p) => p.type === 'SwitchCase')
      const label = kase?.test?.type === 'Literal' ? `${via} · ${kase.test.value}` : via
      out.push(...this.texts(n.argument, file, label))
    }
    return out
  }

  read(): NextStep[] {
    for (const [file, ast] of this.files)
      for (const [n, parents] of walk(ast)) {
        if (n.type !== 'Property' || n.shorthand || keyName(n) !== 'next') continue
        const object = parents.at(-1)
        const sibling = (...keys: string[]): Node =>
          object.properties.find((p: Node) => p.type === 'Property' && keys.includes(keyName(p) ?? ''))?.value
        const told = sibling('observed', 'found', 'why', 'what', 'error')
        const situation = told ? (this.texts(told, file)[0]?.text ?? this.inline(told, file)) : ''
        const v = unwrap(sibling('verdict'))
        const verdict = v?.type === 'Literal' ? String(v.value) : sibling('mistake') ? 'mistake' : ''
        const fn = [...parents]
          .reverse()
          .map((p, i, up) =>
            p.type === 'FunctionDeclaration'
              ? p.id?.name
              : /Function/.test(p.type) && up[i + 1]?.type === 'VariableDeclarator'
                ? up[i + 1].id?.name
                : /Function/.test(p.type) && up[i + 1]?.type === 'MethodDefinition'
                  ? up[i + 1].key?.name
                  : undefined,
          )
          .find(Boolean)
        for (const t of this.texts(n.value, file).filter((t) => t.text.trim() !== '')) {
          // A text chosen from a table or a switch: its case says when, not the object's one observation.
          const kase = /(?:\.| · )([^.·]+)$/.exec(t.via)?.[1]
          const when = kase && t.via.includes('.') ? `case ${kase.trim()}` : situation
          this.found.push({ text: t.text, file, where: [fn ?? '(module)', t.via].filter(Boolean).join(' → '), situation: when, verdict })
        }
      }
    const seen = new Set<string>()
    return this.found.filter((s) => {
      const key = `${s.file}\0${s.text}\0${s.where}`
      if (seen.has(key)) return false
      seen.add(key)
      return true
    })
  }
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) =>
      e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [join(dir, e.name)] : [],
    )
}

/** Every next step written under `folders` (repository-relative), in file order. */
export function nextSteps(folders: readonly string[] = ['helpers']): NextStep[] {
  const files = new Map<string, Node>()
  for (const folder of folders)
    for (const path of tsFiles(join(ROOT, folder)))
      files.set(relative(ROOT, path), parseAst(readFileSync(path, 'utf8'), { lang: 'ts' }, path))
  return new Reader(files).read()
}

/** The same, over source given as text (for the tests). */
export function nextStepsOf(sources: Readonly<Record<string, string>>): NextStep[] {
  return new Reader(new Map(Object.entries(sources).map(([file, text]) => [file, parseAst(text, { lang: 'ts' }, file)]))).read()
}
