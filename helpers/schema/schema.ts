// A small typed validator for JSON that armproof reads back (reports, fixture files, engine
// profiles): each schema checks a value and returns it typed, or the first problem with the
// field's path (`steps[3].verdict`), so a refusal names the exact field. Given a list to collect
// into (`all`), the containers go on past a problem and collect every one (a profile file is
// answered whole). No dependency; no coercion.

export type Result<T> = { ok: true; value: T } | { ok: false; path: string; problem: string }

/** One problem of a value, at its field's path. */
export interface Problem {
  path: string
  problem: string
}

export interface Schema<T> {
  /** `all`: collect every problem there (a container goes on past its first); the result is still the first. */
  check(value: unknown, path: string, all?: Problem[]): Result<T>
  /** How the schema reads in a problem ("a string", "one of live, record"). */
  readonly describe: string
}

/** Every problem of `value` (none: it fits), the containers' own and their items'. */
export function problemsOf(schema: Schema<unknown>, value: unknown, path = ''): Problem[] {
  const all: Problem[] = []
  const r = schema.check(value, path, all)
  if (!r.ok && all.length === 0) all.push({ path: r.path, problem: r.problem })
  return all
}

/** A container's child checked: its problem collected once (a container child collects its own). */
function child<T>(s: Schema<T>, v: unknown, path: string, all: Problem[] | undefined): Result<T> {
  const before = all?.length ?? 0
  const r = s.check(v, path, all)
  if (!r.ok && all && all.length === before) all.push({ path: r.path, problem: r.problem })
  return r
}

export type Infer<S> = S extends Schema<infer T> ? T : never

const ok = <T>(value: T): Result<T> => ({ ok: true, value })
const fail = (path: string, problem: string): { ok: false; path: string; problem: string } => ({ ok: false, path, problem })

/** A value shown in a problem: short, one line, control characters escaped. */
export function shown(value: unknown): string {
  if (value === undefined) return 'missing'
  const text =
    typeof value === 'string'
      ? JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
      : Array.isArray(value)
        ? 'a list'
        : value === null
          ? 'null'
          : typeof value === 'object'
            ? 'an object'
            : String(value)
  return text.replace(
    /[\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )
}

const wrong = (path: string, want: string, value: unknown) => fail(path, `must be ${want}, found ${shown(value)}`)

export function string(rule?: { re: RegExp; says: string }): Schema<string> {
  const describe = rule ? rule.says : 'a string'
  return {
    describe,
    check: (v, path) => (typeof v === 'string' && (!rule || rule.re.test(v)) ? ok(v) : wrong(path, describe, v)),
  }
}

export function number(rule: { integer?: boolean; min?: number } = {}): Schema<number> {
  const describe = `${rule.integer ? 'a whole number' : 'a finite number'}${rule.min !== undefined ? ` ≥ ${rule.min}` : ''}`
  return {
    describe,
    check: (v, path) =>
      typeof v === 'number' && Number.isFinite(v) && (!rule.integer || Number.isInteger(v)) && (rule.min === undefined || v >= rule.min)
        ? ok(v)
        : wrong(path, describe, v),
  }
}

export function boolean(): Schema<boolean> {
  return { describe: 'true or false', check: (v, path) => (typeof v === 'boolean' ? ok(v) : wrong(path, 'true or false', v)) }
}

export function literal<const T extends string | number | boolean>(...values: readonly T[]): Schema<T> {
  const describe = values.length === 1 ? JSON.stringify(values[0]) : `one of ${values.map((x) => JSON.stringify(x)).join(', ')}`
  return { describe, check: (v, path) => ((values as readonly unknown[]).includes(v) ? ok(v as T) : wrong(path, describe, v)) }
}

export function nullable<T>(inner: Schema<T>): Schema<T | null> {
  return { describe: `${inner.describe} or null`, check: (v, path, all) => (v === null ? ok(null) : inner.check(v, path, all)) }
}

export function array<T>(item: Schema<T>, rule: { max?: number } = {}): Schema<T[]> {
  return {
    describe: `a list of ${item.describe}`,
    check(v, path, all) {
      if (!Array.isArray(v)) return wrong(path, 'a list', v)
      if (rule.max !== undefined && v.length > rule.max) return fail(path, `holds ${v.length} items; at most ${rule.max}`)
      const out: T[] = []
      let first: Result<never> | undefined
      for (const [i, x] of v.entries()) {
        const r = child(item, x, `${path}[${i}]`, all)
        if (!r.ok) {
          if (!all) return r
          first ??= r
        } else out.push(r.value)
      }
      return first ?? ok(out)
    },
  }
}

export function record<T>(value: Schema<T>, key?: { re: RegExp; says: string }): Schema<Record<string, T>> {
  return {
    describe: 'an object',
    check(v, path, all) {
      if (!v || typeof v !== 'object' || Array.isArray(v)) return wrong(path, 'an object', v)
      const out: Record<string, T> = {}
      let first: Result<never> | undefined
      for (const [k, x] of Object.entries(v)) {
        const at = `${path}.${k}`
        const bad = key && !key.re.test(k) ? fail(at, `key must be ${key.says}`) : undefined
        if (bad) all?.push({ path: bad.path, problem: bad.problem })
        const r = bad ?? child(value, x, at, all)
        if (!r.ok) {
          if (!all) return r
          first ??= r
        } else {
          // Defined, not assigned: a key "__proto__" (JSON.parse makes it an own key) stays a key, never the prototype.
          Object.defineProperty(out, k, { value: r.value, enumerable: true, writable: true, configurable: true })
        }
      }
      return first ?? ok(out)
    },
  }
}

/** Any JSON value (evidence is free-form); only its presence is checked. */
export function unknownValue(): Schema<unknown> {
  return { describe: 'any value', check: (v, path) => (v === undefined ? wrong(path, 'present', v) : ok(v)) }
}

type Shape = Record<string, Schema<unknown>>
type Optional<T> = Schema<T> & { readonly optional: true }
type OptionalKeys<S extends Shape> = { [K in keyof S]: S[K] extends Optional<unknown> ? K : never }[keyof S]
export type ObjectOf<S extends Shape> = { [K in Exclude<keyof S, OptionalKeys<S>>]: Infer<S[K]> } & { [K in OptionalKeys<S>]?: Infer<S[K]> }

export function optional<T>(inner: Schema<T>): Optional<T> {
  return { optional: true, describe: inner.describe, check: (v, path, all) => inner.check(v, path, all) }
}

/**
 * An object with these keys; keys not named are allowed (a newer writer may add fields) but not
 * kept, unless `closed`: then a key not named is a problem (a file a person writes, where a
 * misspelt key must not pass unseen).
 */
export function object<S extends Shape>(shape: S, options: { closed?: boolean } = {}): Schema<ObjectOf<S>> {
  return {
    describe: 'an object',
    check(v, path, all) {
      if (!v || typeof v !== 'object' || Array.isArray(v)) return wrong(path || 'the file', 'an object', v)
      const out: Record<string, unknown> = {}
      let first: Result<never> | undefined
      const failed = (r: Result<never>): Result<never> | undefined => {
        first ??= r
        return all ? undefined : r
      }
      for (const [k, s] of Object.entries(shape)) {
        const x = (v as Record<string, unknown>)[k]
        const at = path ? `${path}.${k}` : k
        if (x === undefined && 'optional' in s) continue
        const r = child(s, x, at, all)
        if (!r.ok) {
          const stop = failed(r)
          if (stop) return stop
        } else out[k] = r.value
      }
      if (options.closed) {
        for (const k of Object.keys(v)) {
          if (Object.hasOwn(shape, k)) continue
          const at = path ? `${path}.${k}` : k
          const r = fail(at, `is not a key here; the keys are ${Object.keys(shape).join(', ')}`)
          all?.push({ path: r.path, problem: r.problem })
          const stop = failed(r)
          if (stop) return stop
        }
      }
      return first ?? ok(out as ObjectOf<S>)
    },
  }
}

/** One of several object shapes, chosen by a tag field. */
export function tagged<S extends Readonly<Record<string, Schema<unknown>>>>(tag: string, shapes: S): Schema<Infer<S[keyof S]>> {
  const names = Object.keys(shapes)
  return {
    describe: `an object with ${tag} ${names.join(' or ')}`,
    check(v, path, all) {
      if (!v || typeof v !== 'object' || Array.isArray(v)) return wrong(path, `an object with ${tag} ${names.join(' or ')}`, v)
      const t = (v as Record<string, unknown>)[tag]
      // Own keys only: a tag such as "constructor" or "toString" names no shape (an inherited property is no schema).
      const s = typeof t === 'string' && Object.hasOwn(shapes, t) ? shapes[t] : undefined
      if (!s) return wrong(path ? `${path}.${tag}` : tag, `one of ${names.join(', ')}`, t)
      return s.check(v, path, all) as Result<Infer<S[keyof S]>>
    },
  }
}

/** Whether a JSON.parse error means the text stops before the value does (a truncated file). */
export function endsEarly(text: string, error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error)
  if (/end of JSON input|Unterminated/i.test(message)) return true
  const at = /position (\d+)/.exec(message)
  return at !== null && Number(at[1]) >= text.trimEnd().length
}
