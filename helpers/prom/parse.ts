// Parser for Prometheus `/metrics` pages: the classic text format (0.0.4) and OpenMetrics.
// Pure: takes the page as a string, returns families, samples and one error per bad line.
// Why not an npm parser: see docs/reference/prometheus-parsing.md (colon names, labelled
// histograms and `_created` gauge families are all mishandled there).
import { Expected } from './label-sets.ts'
import { BUILD, CHECK, Cursor, LineError, RECORD, unescapeHelp } from './lexer.ts'
import { ALL_SUFFIXES, SUFFIXES, omSampleProblem } from './families.ts'
import { SampleLog } from './sample-log.ts'

import type { MetricFamily, MetricType, PromPage, PromParseError, PromParseOptions, Sample } from './types.ts'

export type { MetricFamily, MetricType, PromPage, PromParseError, PromParseOptions, Sample } from './types.ts'

const TEXT_TYPES: ReadonlySet<string> = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped'])
const OM_TYPES: ReadonlySet<string> = new Set(['counter', 'gauge', 'histogram', 'gaugehistogram', 'summary', 'stateset', 'info', 'unknown'])

interface FamilyState {
  fam: MetricFamily
  typed: boolean
  helped: boolean
  unitSet: boolean
  sampled: boolean
  /** A text-format family's samples until its `samples` is first read. */
  log: SampleLog | undefined
}

/** What a sample name resolves to, cached until the next HELP/TYPE/UNIT line. */
interface NameState {
  /** Its family, once a valid sample of that name was seen. */
  st: FamilyState | undefined
  /** The name after the family name, e.g. '_bucket'. */
  suffix: string
  keep: boolean
  /** A valid sample of this name was seen (its prefix is in prefixSet). */
  counted: boolean
  /** What the previous line of this name read, for the next one's labels. */
  expected: Expected
}

/** 'application/openmetrics-text; version=1.0.0; charset=utf-8' → 'openmetrics'; anything else → 'text'. */
export function contentTypeFormat(contentType: string | undefined): 'text' | 'openmetrics' {
  const media = (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase()
  return media === 'application/openmetrics-text' ? 'openmetrics' : 'text'
}

function suffixIn(st: FamilyState, name: string): boolean {
  const base = st.fam.name
  if (name === base) return true
  if (!name.startsWith(base)) return false
  for (const s of SUFFIXES[st.fam.type]) if (name.length === base.length + s.length && name.endsWith(s)) return true
  return false
}

/** Holds the state of one parse; one instance per page. */
class PageBuilder {
  readonly families: MetricFamily[] = []
  readonly errors: PromParseError[] = []
  readonly states = new Map<string, FamilyState>()
  readonly prefixSet = new Set<string>()
  sampleCount = 0
  eofLine = 0
  readonly cur: Cursor
  readonly om: boolean
  readonly keep: ((sampleName: string) => boolean) | undefined
  current: FamilyState | undefined
  // Sample names repeat (every series prints the same _bucket/_count/_sum): cache what each
  // resolves to. A new HELP/TYPE/UNIT line can change that, so meta() clears the cache.
  readonly names = new Map<string, NameState>()
  lastName: string | undefined
  lastNameState: NameState | undefined

  constructor(text: string, options: PromParseOptions) {
    this.om = options.format === 'openmetrics'
    this.keep = options.keep
    this.cur = new Cursor(text, this.om)
  }

  /** Every line of the page; returns how many there are. */
  lines(text: string): number {
    let lineNo = 0
    for (let pos = 0; pos < text.length; ) {
      let nl = text.indexOf('\n', pos)
      if (nl === -1) nl = text.length
      const end = nl > pos && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl
      this.line(pos, end, ++lineNo)
      pos = nl + 1
    }
    return lineNo
  }

  line(start: number, end: number, line: number): void {
    const cur: Cursor = this.cur
    try {
      if (this.eofLine) throw new LineError(`content after "# EOF" (line ${this.eofLine})`)
      cur.reset(start, end)
      if (!this.om) cur.skipBlanks()
      if (cur.p >= end) {
        if (this.om) throw new LineError('blank line (not allowed in OpenMetrics)')
        return
      }
      if (this.om && (cur.peek() === 32 || cur.peek() === 9)) throw new LineError('leading whitespace (not allowed in OpenMetrics)')
      if (cur.peek() === 35) {
        if (this.om) this.omComment(line)
        else this.textComment()
      } else this.sample(line)
    } catch (e) {
      if (!(e instanceof LineError)) throw e
      this.errors.push({ line, message: e.message, text: cur.s.slice(start, Math.min(end, start + 200)) })
    }
  }

  textComment(): void {
    const cur: Cursor = this.cur
    cur.p++
    if (cur.peek() !== 32 && cur.peek() !== 9) return // '#EOF', '#': plain comments
    cur.skipBlanks()
    const kwAt = cur.p
    while (cur.peek() >= 65 && cur.peek() <= 90) cur.p++
    const kw = cur.s.slice(kwAt, cur.p)
    const after = cur.peek()
    if ((kw !== 'HELP' && kw !== 'TYPE' && kw !== 'UNIT') || (after !== -1 && after !== 32 && after !== 9)) return
    cur.skipBlanks()
    const name = cur.metricName()
    const next = cur.peek()
    const bad =
      name === ''
        ? `# ${kw} line without a valid metric name`
        : next !== -1 && next !== 32 && next !== 9
          ? `invalid character in the metric name of a # ${kw} line`
          : undefined
    if (bad !== undefined) {
      if (kw === 'UNIT') return // not part of the classic format: a malformed one is just a comment
      cur.fail(bad)
    }
    cur.skipBlanks()
    const rest = cur.s.slice(cur.p, cur.end)
    if (kw === 'HELP') {
      this.meta('HELP', name, unescapeHelp(rest, false))
      return
    }
    const word = rest.trimEnd()
    if (kw === 'UNIT') {
      this.meta('UNIT', name, word)
      return
    }
    if (!TEXT_TYPES.has(word))
      cur.fail(
        word === ''
          ? `# TYPE line for ${name} has no type`
          : `unknown metric type "${word}" (expected counter, gauge, histogram, summary or untyped)`,
      )
    this.meta('TYPE', name, word)
  }

  omComment(line: number): void {
    const cur: Cursor = this.cur
    const { s, start, end } = cur
    if (end - start === 5 && s.startsWith('# EOF', start)) {
      this.eofLine = line
      return
    }
    const kw = s.slice(start + 2, start + 6)
    if (
      !s.startsWith('# ', start) ||
      (kw !== 'HELP' && kw !== 'TYPE' && kw !== 'UNIT') ||
      s.charCodeAt(start + 6) !== 32 ||
      start + 6 >= end
    ) {
      cur.fail('OpenMetrics allows only "# HELP name text", "# TYPE name type", "# UNIT name unit" and "# EOF" as comment lines')
    }
    cur.p = start + 7
    const name = cur.metricName()
    if (name === '') cur.fail(`# ${kw} line without a valid metric name`)
    cur.expect(32, 'a single space after the metric name')
    const rest = s.slice(cur.p, end)
    if (kw === 'HELP') {
      this.meta('HELP', name, unescapeHelp(rest, true))
      return
    }
    if (kw === 'TYPE' && !OM_TYPES.has(rest)) {
      cur.fail(`unknown metric type "${rest}"${rest === 'untyped' ? ' (OpenMetrics calls it "unknown")' : ''}`)
    }
    if (kw === 'UNIT') {
      if (!/^[A-Za-z0-9_:]*$/.test(rest)) cur.fail(`invalid unit "${rest}"`)
      if (rest !== '' && !name.endsWith(`_${rest}`)) cur.fail(`metric name ${name} must end with "_${rest}" to carry unit "${rest}"`)
    }
    this.meta(kw, name, rest)
  }

  meta(kw: 'HELP' | 'TYPE' | 'UNIT', name: string, arg: string): void {
    let st = this.states.get(name)
    if (this.om && st) {
      if (kw === 'HELP' ? st.helped : kw === 'TYPE' ? st.typed : st.unitSet) this.cur.fail(`repeated # ${kw} for ${name}`)
      if (st.sampled) this.cur.fail(`# ${kw} for ${name} comes after its samples`)
      const type = kw === 'TYPE' ? arg : st.fam.type
      if ((type === 'info' || type === 'stateset') && (kw === 'UNIT' || st.unitSet))
        this.cur.fail(`${type === 'info' ? 'an' : 'a'} ${type} family cannot have a unit`)
    }
    if (!this.om && kw === 'TYPE' && st?.typed && st.fam.type !== arg)
      this.cur.fail(`# TYPE ${arg} for ${name} conflicts with the earlier # TYPE ${st.fam.type}`)
    st ??= this.create(name)
    if (kw === 'HELP') {
      st.fam.help = arg
      st.helped = true
    } else if (kw === 'TYPE') {
      st.fam.type = arg as MetricType
      st.typed = true
    } else {
      st.fam.unit = arg
      st.unitSet = true
    }
    this.current = st
    // A new TYPE can change which family a name belongs to.
    this.names.clear()
    this.lastName = undefined
  }

  create(name: string): FamilyState {
    const fam: MetricFamily = { name, type: this.om ? 'unknown' : 'untyped', help: '', samples: [] }
    const st: FamilyState = { fam, typed: false, helped: false, unitSet: false, sampled: false, log: undefined }
    this.families.push(fam)
    this.states.set(name, st)
    return st
  }

  /** The family a sample belongs to: the current one, then an exact family name, then name minus a suffix its type owns. */
  resolve(name: string): FamilyState {
    if (this.current && suffixIn(this.current, name)) return this.current
    const exact = this.states.get(name)
    if (exact) return exact
    for (const suffix of ALL_SUFFIXES) {
      if (!name.endsWith(suffix)) continue
      const st = this.states.get(name.slice(0, -suffix.length))
      if (st && SUFFIXES[st.fam.type].includes(suffix)) return st
    }
    return this.create(name)
  }

  sample(line: number): void {
    const cur: Cursor = this.cur
    const name = cur.sampleName()
    let ns = this.lastNameState
    if (name !== this.lastName || ns === undefined) {
      ns = this.names.get(name)
      if (ns === undefined) {
        ns = { st: undefined, suffix: '', keep: this.keep ? this.keep(name) : true, counted: false, expected: new Expected() }
        this.names.set(name, ns)
      }
      this.lastName = name
      this.lastNameState = ns
    }
    // OpenMetrics checks need the sample even when it is not kept.
    const s = cur.sampleRest(name, line, this.om ? BUILD : ns.keep ? RECORD : CHECK, ns.expected)
    let st = ns.st
    if (st === undefined) {
      st = ns.st = this.resolve(name)
      ns.suffix = name.slice(st.fam.name.length)
    }
    if (this.om) {
      const problem = omSampleProblem(st.fam.type, ns.suffix, s!)
      if (problem !== undefined) throw new LineError(problem)
    }
    if (!ns.counted) {
      ns.counted = true
      const colon = name.indexOf(':')
      if (colon > 0) this.prefixSet.add(name.slice(0, colon))
    }
    this.sampleCount++
    st.sampled = true
    if (!ns.keep) return
    // OpenMetrics checks each sample's fields as it reads it, so it builds them at once.
    if (this.om) st.fam.samples.push(s!)
    else (st.log ?? this.logOf(st)).add(name, line, cur, ns.expected.pairs)
  }

  /**
   * A text-format family's samples, recorded as numbers and built when first read (sample-log.ts):
   * the log is made with the family's first kept sample, so a family none of whose samples is kept
   * (a scrape reads a few families of a page) keeps its empty `samples` and costs no log.
   */
  logOf(st: FamilyState): SampleLog {
    const log = (st.log = new SampleLog(this.cur.s, this.cur.sets))
    Object.defineProperty(st.fam, 'samples', {
      get(this: MetricFamily) {
        const samples = log.build()
        st.log = undefined
        Object.defineProperty(this, 'samples', { value: samples, writable: true, enumerable: true, configurable: true })
        return samples
      },
      enumerable: true,
      configurable: true,
    })
    return log
  }
}

/** Parses a whole `/metrics` page; never throws on malformed input (see `errors`). */
export function parsePrometheusText(text: string, options: PromParseOptions = {}): PromPage {
  const b = new PageBuilder(text, options)
  const lines = b.lines(text)
  if (b.om && !b.eofLine) b.errors.push({ line: lines + 1, message: 'missing "# EOF" at the end of an OpenMetrics page', text: '' })

  const { families, errors, sampleCount, states, prefixSet } = b
  let index: Map<string, Sample[]> | undefined
  return {
    families,
    errors,
    sampleCount,
    samples(name) {
      if (!index) {
        index = new Map()
        for (const fam of families) {
          for (const s of fam.samples) {
            const list = index.get(s.name)
            if (list) list.push(s)
            else index.set(s.name, [s])
          }
        }
      }
      return index.get(name)?.slice() ?? []
    },
    family: (name) => states.get(name)?.fam,
    prefixes: () => [...prefixSet].sort(),
  }
}
