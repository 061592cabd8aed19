// The schema toolkit (helpers/schema/schema.ts) on its own: each combinator accepts what it should
// and refuses the rest, with the field's path and what was found in the problem; with a list to
// collect into, the containers go on and report every problem, each once. Property tests (seeded):
// a value the schema describes is accepted and returned as it is; one field changed to the wrong
// kind is refused at exactly that field's path.
import { describe, expect, test } from 'vitest'
import {
  array,
  boolean,
  endsEarly,
  literal,
  nullable,
  number,
  object,
  optional,
  problemsOf,
  record,
  shown,
  string,
  tagged,
  unknownValue,
  type Problem,
  type Schema,
} from '../../helpers/schema/schema.ts'
import { pick, prng } from '../support/prng.ts'

const check = <T>(s: Schema<T>, v: unknown, path = 'x') => s.check(v, path)
const refusal = (s: Schema<unknown>, v: unknown, path = 'x') => {
  const r = s.check(v, path)
  return r.ok ? undefined : `${r.path}: ${r.problem}`
}

describe('each combinator accepts its values and refuses the rest, at the path given', () => {
  test('string, with and without a rule', () => {
    expect(check(string(), '')).toEqual({ ok: true, value: '' })
    expect(refusal(string(), 7)).toBe('x: must be a string, found 7')
    expect(refusal(string(), null)).toBe('x: must be a string, found null')
    expect(refusal(string(), undefined)).toBe('x: must be a string, found missing')
    const id = string({ re: /^[a-z]+$/, says: 'lowercase letters' })
    expect([id.describe, check(id, 'abc').ok]).toEqual(['lowercase letters', true])
    expect(refusal(id, 'ABC')).toBe('x: must be lowercase letters, found "ABC"')
  })

  test('number: finite only, whole and minimum when asked, never coerced from text', () => {
    expect(check(number(), -1.5)).toEqual({ ok: true, value: -1.5 })
    for (const v of [Number.NaN, Number.POSITIVE_INFINITY, '1', true]) expect(check(number(), v).ok, String(v)).toBe(false)
    expect(refusal(number(), '1')).toBe('x: must be a finite number, found "1"')
    expect(refusal(number(), Number.NaN)).toBe('x: must be a finite number, found NaN')
    const count = number({ integer: true, min: 0 })
    expect([count.describe, check(count, 0).ok, check(count, 3).ok]).toEqual(['a whole number ≥ 0', true, true])
    expect(refusal(count, 1.5)).toBe('x: must be a whole number ≥ 0, found 1.5')
    expect(refusal(count, -1)).toBe('x: must be a whole number ≥ 0, found -1')
  })

  test('boolean and literal', () => {
    expect([check(boolean(), false).ok, refusal(boolean(), 'true')]).toEqual([true, 'x: must be true or false, found "true"'])
    const mode = literal('live', 'record')
    expect([mode.describe, check(mode, 'record')]).toEqual(['one of "live", "record"', { ok: true, value: 'record' }])
    expect(refusal(mode, 'replay')).toBe('x: must be one of "live", "record", found "replay"')
    expect(refusal(literal(1), '1')).toBe('x: must be 1, found "1"')
  })

  test('nullable and unknownValue: null is a value, missing is not', () => {
    expect([check(nullable(string()), null), check(nullable(string()), 'a')]).toEqual([
      { ok: true, value: null },
      { ok: true, value: 'a' },
    ])
    expect(nullable(string()).describe).toBe('a string or null')
    expect(refusal(nullable(string()), 1)).toBe('x: must be a string, found 1')
    expect(check(unknownValue(), null)).toEqual({ ok: true, value: null })
    expect(refusal(unknownValue(), undefined)).toBe('x: must be present, found missing')
  })

  test('array: each item at its index, a cap on length, and not an object with numeric keys', () => {
    const list = array(number(), { max: 3 })
    expect(check(list, [1, 2, 3])).toEqual({ ok: true, value: [1, 2, 3] })
    expect(refusal(list, [1, 'two', 3])).toBe('x[1]: must be a finite number, found "two"')
    expect(refusal(list, [1, 2, 3, 4])).toBe('x: holds 4 items; at most 3')
    expect(refusal(list, { 0: 1, length: 1 })).toBe('x: must be a list, found an object')
    expect(list.describe).toBe('a list of a finite number')
  })

  test('record: every value at .key, and a rule for the keys', () => {
    const env = record(string(), { re: /^[A-Z_]+$/, says: 'an env name' })
    expect(check(env, { A: 'x', B_C: 'y' })).toEqual({ ok: true, value: { A: 'x', B_C: 'y' } })
    expect(refusal(env, { A: 1 })).toBe('x.A: must be a string, found 1')
    expect(refusal(env, { lower: 'x' })).toBe('x.lower: key must be an env name')
    expect(refusal(env, ['x'])).toBe('x: must be an object, found a list')
    // A hostile file's "__proto__" key (JSON.parse makes it an own key) stays a key, never the prototype.
    const hostile = record(object({ n: number() })).check(JSON.parse('{"__proto__": {"n": 1}, "a": {"n": 2}}'), 'x')
    expect(
      hostile.ok && [
        Object.getPrototypeOf(hostile.value) === Object.prototype,
        Object.keys(hostile.value),
        Object.hasOwn(hostile.value, '__proto__'),
      ],
    ).toEqual([true, ['__proto__', 'a'], true])
  })

  test('object: required and optional keys, unknown keys dropped, or refused when closed; the root is "the file"', () => {
    const shape = object({ name: string(), port: optional(number({ integer: true })) })
    expect(shape.check({ name: 'a', extra: true }, '')).toEqual({ ok: true, value: { name: 'a' } })
    expect(shape.check({ name: 'a', port: 80 }, '')).toEqual({ ok: true, value: { name: 'a', port: 80 } })
    expect(refusal(shape, { port: 80 }, '')).toBe('name: must be a string, found missing')
    expect(refusal(shape, { name: 'a', port: 'eighty' }, 'targets[2]')).toBe('targets[2].port: must be a whole number, found "eighty"')
    expect(refusal(shape, 'text', '')).toBe('the file: must be an object, found "text"')
    expect(refusal(shape, null, 'head')).toBe('head: must be an object, found null')
    const closed = object({ name: string() }, { closed: true })
    expect(refusal(closed, { name: 'a', nmae: 'b' }, 'targets[0]')).toBe('targets[0].nmae: is not a key here; the keys are name')
    expect(refusal(closed, { nmae: 'b' }, '')).toBe('name: must be a string, found missing')
  })

  test('tagged: the tag chooses the shape; a missing or unknown tag is refused at the tag', () => {
    const source = tagged('kind', {
      page: object({ kind: literal('page'), url: string() }),
      file: object({ kind: literal('file'), path: string() }),
    })
    expect(source.check({ kind: 'file', path: '/x' }, 'src')).toEqual({ ok: true, value: { kind: 'file', path: '/x' } })
    expect(refusal(source, { kind: 'page', path: '/x' }, 'src')).toBe('src.url: must be a string, found missing')
    expect(refusal(source, { kind: 'socket' }, 'src')).toBe('src.kind: must be one of page, file, found "socket"')
    expect(refusal(source, { url: 'u' }, '')).toBe('kind: must be one of page, file, found missing')
    expect(refusal(source, [], 'src')).toBe('src: must be an object with kind page or file, found a list')
    // A tag that names an inherited property is not a shape.
    expect(refusal(source, { kind: 'toString' }, 'src')).toBe('src.kind: must be one of page, file, found "toString"')
  })
})

describe('every problem collected, each once', () => {
  const doc = object({ name: string(), steps: array(object({ id: string(), ms: number() })), env: record(number()) }, { closed: true })

  test('a container goes on past its first problem; the result is still the first', () => {
    const value = {
      name: 1,
      steps: [
        { id: 'a', ms: 'x' },
        { id: 2, ms: 1 },
      ],
      env: { A: 'no' },
      extra: 0,
    }
    const all: Problem[] = []
    const r = doc.check(value, '', all)
    expect(r).toEqual({ ok: false, path: 'name', problem: 'must be a string, found 1' })
    expect(all.map((p) => p.path)).toEqual(['name', 'steps[0].ms', 'steps[1].id', 'env.A', 'extra'])
    expect(problemsOf(doc, value)).toEqual(all)
  })

  test('problemsOf: none for a value that fits; a leaf schema gives its one problem', () => {
    expect(problemsOf(doc, { name: 'n', steps: [], env: {} })).toEqual([])
    expect(problemsOf(string(), 3, 'at')).toEqual([{ path: 'at', problem: 'must be a string, found 3' }])
  })
})

describe('what a problem shows of the value found', () => {
  test('short, on one line, invisible and direction characters escaped', () => {
    expect(shown('a'.repeat(50))).toBe(`"${'a'.repeat(40)}…"`)
    expect(shown('x\u202ey')).toBe('"x\\u202ey"')
    expect(shown('a\u200bb\u0085')).toBe('"a\\u200bb\\u0085"')
    expect(shown('line\nbreak')).toBe('"line\\nbreak"')
    expect([shown([1]), shown({}), shown(null), shown(undefined), shown(false)]).toEqual([
      'a list',
      'an object',
      'null',
      'missing',
      'false',
    ])
  })

  test('endsEarly: a JSON text cut short, told from one that is wrong inside', () => {
    const error = (text: string) => {
      try {
        JSON.parse(text)
      } catch (e) {
        return e
      }
      throw new Error(`parsed: ${text}`)
    }
    for (const cut of ['{"a": [1, 2', '{"a": "tex', '{"a":', '  {  \n']) expect(endsEarly(cut, error(cut)), cut).toBe(true)
    for (const bad of ['{"a": 1,, "b": 2}', '{"a": nope}', '[1 2]']) expect(endsEarly(bad, error(bad)), bad).toBe(false)
  })
})

describe('property: a value the schema describes is accepted whole; one wrong field is refused at its path (seeded)', () => {
  const step = object(
    { id: string(), verdict: literal('passed', 'failed'), ms: number({ integer: true, min: 0 }), note: optional(nullable(string())) },
    { closed: true },
  )
  const report = object({ svc: string(), steps: array(step), labels: record(string()), ok: boolean() }, { closed: true })

  /** A random value of `report`'s shape, and the path of every leaf with a value of the wrong kind for it. */
  function generate(random: () => number) {
    const leaves: Array<{ path: string[]; wrong: unknown }> = []
    const word = () => pick(random, ['a', 'llm-7', '', 'ünï', 'x y'])
    const steps = Array.from({ length: Math.floor(random() * 4) }, (_, i) => {
      const s: Record<string, unknown> = { id: word(), verdict: pick(random, ['passed', 'failed']), ms: Math.floor(random() * 1000) }
      if (random() < 0.5) s.note = random() < 0.5 ? null : word()
      leaves.push(
        { path: ['steps', String(i), 'id'], wrong: 7 },
        { path: ['steps', String(i), 'verdict'], wrong: 'green' },
        { path: ['steps', String(i), 'ms'], wrong: pick(random, [-1, 0.5, '3', null]) },
      )
      if ('note' in s) leaves.push({ path: ['steps', String(i), 'note'], wrong: pick(random, [1, false, []]) })
      return s
    })
    const labels = Object.fromEntries(Array.from({ length: Math.floor(random() * 3) }, (_, i) => [`k${i}`, word()]))
    for (const k of Object.keys(labels)) leaves.push({ path: ['labels', k], wrong: pick(random, [1, {}, null]) })
    leaves.push({ path: ['svc'], wrong: pick(random, [undefined, 1]) }, { path: ['ok'], wrong: pick(random, ['true', 0]) })
    return { value: { svc: word(), steps, labels, ok: random() < 0.5 }, leaves }
  }

  const pathText = (path: readonly string[]) => path.map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`)).join('')

  test('200 random reports', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const random = prng(seed)
      const { value, leaves } = generate(random)
      expect(report.check(value, ''), `seed ${seed}`).toEqual({ ok: true, value })
      const leaf = pick(random, leaves)
      const broken = structuredClone(value) as Record<string, any>
      const parent = leaf.path.slice(0, -1).reduce((o, k) => o[k], broken)
      parent[leaf.path.at(-1)!] = leaf.wrong
      const problems = problemsOf(report, broken)
      expect(
        problems.map((p) => p.path),
        `seed ${seed}: ${pathText(leaf.path)} = ${JSON.stringify(leaf.wrong)}`,
      ).toEqual([pathText(leaf.path)])
      expect(problems[0]!.problem, `seed ${seed}`).toContain(`found ${shown(leaf.wrong)}`)
      // A key no shape names, anywhere: refused where it is, the rest still checked.
      const extra = structuredClone(value) as Record<string, any>
      const at = extra.steps.length > 0 && random() < 0.5 ? extra.steps[0] : extra
      at.verdcit = 'passed'
      expect(
        problemsOf(report, extra).map((p) => p.path),
        `seed ${seed}`,
      ).toEqual([at === extra ? 'verdcit' : 'steps[0].verdcit'])
    }
  })
})
