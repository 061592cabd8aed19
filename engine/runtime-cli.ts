// The parts of the `docker` and `kubectl` shims that need more than sh (engine/runtime-shims.ts
// runs this with node): `docker inspect [--format T] NAME` (a JSON array, or a Go template of
// `{{.Field.Path}}` and `{{json .Field}}` actions) and `kubectl get pod NAME [-n NS] [-o …]`
// (the table, name, json, yaml, or a jsonpath of `{.a.b}`, `{.a[0].b}` and `{.a[*].b}` parts).
import { readFileSync } from './fs.ts'
import { dockerInspect, kubePod } from './runtime-objects.ts'
import type { RuntimeFacts } from './runtime-objects.ts'

type Json = null | boolean | number | string | Json[] | { [k: string]: Json }

function fail(message: string, code = 1): never {
  process.stderr.write(`${message}\n`)
  process.exit(code)
}

/** Go's fmt of a value in a template (`{{.X}}`): maps as map[k:v], slices as [a b]. */
function goFormat(v: Json): string {
  if (v === null) return '<nil>'
  if (Array.isArray(v)) return `[${v.map(goFormat).join(' ')}]`
  if (typeof v === 'object')
    return `map[${Object.keys(v)
      .sort()
      .map((k) => `${k}:${goFormat(v[k]!)}`)
      .join(' ')}]`
  return String(v)
}

function walk(root: Json, path: readonly string[], where: string): Json {
  let v: Json = root
  for (const key of path) {
    if (v === null || typeof v !== 'object' || Array.isArray(v) || !(key in v))
      fail(`template: ${where}: map has no entry for key "${key}"`)
    v = (v as Record<string, Json>)[key]!
  }
  return v
}

export function goTemplate(template: string, root: Json): string {
  return template
    .replace(/\{\{\s*(json\s+)?\.([A-Za-z0-9_.]*)\s*\}\}/g, (whole, asJson: string | undefined, path: string) => {
      const v = walk(root, path === '' ? [] : path.split('.'), whole)
      return asJson ? JSON.stringify(v) : goFormat(v)
    })
    .replace(/\{\{[^}]*\}\}/g, (rest) =>
      fail(`the docker shim of the reference engine evaluates {{.Field.Path}} and {{json .Field}} only, not ${rest}`),
    )
}

export function jsonPath(template: string, root: Json): string {
  return template.replace(/\{([^{}]*)\}/g, (_whole, expr: string) => {
    if (!expr.startsWith('.'))
      fail(`the kubectl shim of the reference engine evaluates {.a.b}, {.a[0].b} and {.a[*].b} only, not {${expr}}`)
    let values: Json[] = [root]
    for (const part of expr.slice(1).split('.').filter(Boolean)) {
      const m = /^([A-Za-z0-9_-]+)(?:\[(\d+|\*)\])?$/.exec(part)
      if (!m) fail(`error: error parsing jsonpath {${expr}}, unrecognized identifier ${part}`)
      values = values.flatMap((v) => {
        const next = v !== null && typeof v === 'object' && !Array.isArray(v) ? v[m[1]!] : undefined
        if (next === undefined) return []
        if (m[2] === undefined) return [next]
        if (!Array.isArray(next)) return []
        return m[2] === '*' ? next : next[Number(m[2])] === undefined ? [] : [next[Number(m[2])]!]
      })
    }
    return values.map((v) => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v))).join(' ')
  })
}

function age(from: Date): string {
  const s = Math.max(0, Math.floor((Date.now() - from.getTime()) / 1000))
  if (s < 120) return `${s}s`
  if (s < 600) return `${Math.floor(s / 60)}m${s % 60 === 0 ? '' : `${s % 60}s`}`
  if (s < 10_800) return `${Math.floor(s / 60)}m`
  return `${Math.floor(s / 3600)}h`
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]! + 3))).join('')).join('\n') + '\n'
}

async function kubectlGet(f: RuntimeFacts, argv: readonly string[]): Promise<void> {
  let namespace = 'default'
  let output = ''
  const names: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '-n' || a === '--namespace') namespace = argv[++i] ?? ''
    else if (a.startsWith('--namespace=')) namespace = a.slice('--namespace='.length)
    else if (a === '-o' || a === '--output') output = argv[++i] ?? ''
    else if (a.startsWith('-o') && a.length > 2) output = a.slice(a[2] === '=' ? 3 : 2)
    else if (a.startsWith('--output=')) output = a.slice('--output='.length)
    else if (!a.startsWith('-')) names.push(a)
  }
  const [kind, ...rest] = names
  const name = kind?.includes('/') ? kind.split('/')[1] : rest[0]
  if (!kind || !['pod', 'pods', 'po'].includes(kind.split('/')[0]!))
    fail(`the kubectl shim of the reference engine answers only 'get pod NAME', not 'get ${names.join(' ')}'`)
  if (name !== f.svc || namespace !== f.namespace) fail(`Error from server (NotFound): pods "${name ?? ''}" not found`)
  const pod = kubePod(f) as Json
  if (output === 'json') process.stdout.write(`${JSON.stringify(pod, null, 4)}\n`)
  // yaml only for `-o yaml`: its import is a third of this command's start.
  else if (output === 'yaml') process.stdout.write((await import('yaml')).stringify(pod))
  else if (output === 'name') process.stdout.write(`pod/${f.svc}\n`)
  else if (output.startsWith('jsonpath=')) process.stdout.write(jsonPath(output.slice('jsonpath='.length), pod))
  else if (output === '' || output === 'wide') {
    const head = [
      'NAME',
      'READY',
      'STATUS',
      'RESTARTS',
      'AGE',
      ...(output === 'wide' ? ['IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES'] : []),
    ]
    const down = f.faults?.includes('container_stopped') === true
    const row = [
      f.svc,
      down ? '0/1' : '1/1',
      down ? 'CrashLoopBackOff' : 'Running',
      down ? '5' : '0',
      age(f.startedAt),
      ...(output === 'wide' ? ['127.0.0.1', 'localhost', '<none>', '<none>'] : []),
    ]
    process.stdout.write(table([head, row]))
  } else
    fail(`error: unable to match a printer suitable for the output format "${output}", allowed formats are: json,jsonpath,name,wide,yaml`)
}

function dockerInspectCli(f: RuntimeFacts, argv: readonly string[]): void {
  let format: string | null = null
  const names: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '-f' || a === '--format') format = argv[++i] ?? ''
    else if (a.startsWith('--format=')) format = a.slice('--format='.length)
    else if (a === '--type') i++
    else if (!a.startsWith('-')) names.push(a)
  }
  if (names.length === 0) fail('"docker inspect" requires at least 1 argument.')
  const container = dockerInspect(f)[0] as { Id: string }
  // A container is named by its name or by a prefix of its id.
  const objects = names.map((n) => (n === f.svc || container.Id.startsWith(n) ? (container as Json) : null))
  const missing = names.filter((_, i) => objects[i] === null)
  const found = objects.filter((o) => o !== null) as Json[]
  if (format === null) process.stdout.write(`${JSON.stringify(found, null, 4)}\n`)
  else for (const o of found) process.stdout.write(`${goTemplate(format, o)}\n`)
  if (missing.length > 0) fail(missing.map((n) => `Error: No such object: ${n}`).join('\n'))
}

if (import.meta.main) {
  const [verb, factsPath, ...rest] = process.argv.slice(2)
  const raw = JSON.parse(readFileSync(factsPath!, 'utf8')) as RuntimeFacts & { startedAt: string }
  const facts: RuntimeFacts = { ...raw, startedAt: new Date(raw.startedAt) }
  if (verb === 'docker-inspect') dockerInspectCli(facts, rest)
  else if (verb === 'kubectl-get') await kubectlGet(facts, rest)
  else fail(`runtime-cli: unknown verb ${verb}`, 2)
}
