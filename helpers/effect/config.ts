// Flags, env and .env → what `effect` is asked, checked before anything is contacted: every problem
// at once, one line each (exit 2). The report itself is read later (./arm.ts); here only its path.
import { parse as parseDotenv } from 'dotenv'
import { accessSync, constants } from 'node:fs'
import { resolve } from 'node:path'
import { envBoolean, parseCommandLine } from '../config/command-line.ts'
import { parseDuration } from '../config/duration.ts'
import { valueProblem, type KnobName } from '../config/knobs.ts'
import { BUILTIN_PROFILES, findKnob, isBuiltinProfile, loadProfile, problemText, type LoadedProfile } from '../profiles/load.ts'
import type { KnobSpec } from '../profiles/types.ts'
import { outputProblem, type OutputSpec } from '../config/outputs.ts'
import { showValue } from '../config/shell.ts'
import { endpointUrl, prometheusUrlProblem } from '../config/url.ts'
import { parseMatch } from '../prom/query.ts'
import { EFFECT_OPTIONS, type EffectFlag } from './options.ts'
import { METRIC_IDS } from './metrics.ts'
import { BASELINE_OPTIONS, type BaselineOption } from './windows.ts'

export type EffectMode = 'live' | 'record' | 'replay'

export interface EffectAsk {
  report: string | null
  svc: string | null
  knob: KnobName | null
  /** The knob's catalog entry in the engine profile (null without --knob). */
  knobSpec: KnobSpec | null
  /** --engine as given (null: the report's profile, else radiance's). */
  engine: string | null
  /** The profile --engine names, or radiance's when none is given. */
  profile: LoadedProfile
  value: string | null
  previous: string | null
  armedAtMs: number | null
  baseUrl: string | null
  prometheusUrl: string | null
  match: string | null
  beforeMs: number
  afterMs: number
  baseline: BaselineOption
  metrics: string[] | null
  thresholds: Record<string, number>
  minCount: number
  out: string | null
  /** --json (EFFECT_JSON): the JSON result alone on stdout, every other line on stderr. */
  json: boolean
  /** --color (true) / --no-color (false), else undefined: helpers/cli/color.ts decides. */
  color: boolean | undefined
  summary: string | null
  vault: string | null
  page: string | null
  caFile: string | null
  mode: EffectMode
  fixtures: string | null
}

export type AskResult = { ok: true; ask: EffectAsk } | { ok: false; help?: boolean; version?: boolean; problems: string[] }

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/
const SVC = /^[A-Za-z0-9_.-]+$/
export { METRIC_IDS }

export function parseThresholds(text: string): { thresholds: Record<string, number> } | { error: string } {
  const thresholds: Record<string, number> = {}
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const m = /^([a-z0-9-]+)\s*=\s*(\d+(?:\.\d+)?)(%?)$/.exec(part)
    if (!m) return { error: `${showValue(part)} is not id=N% (e.g. ttft=15%)` }
    if (!METRIC_IDS.includes(m[1]!)) return { error: `${showValue(m[1]!)} is not a metric id (${METRIC_IDS.join(', ')})` }
    const v = Number(m[2]) / (m[3] ? 100 : 1)
    if (!(v >= 0 && v < 10)) return { error: `${showValue(part)}: a threshold is a share between 0% and 1000%` }
    thresholds[m[1]!] = v
  }
  return { thresholds }
}

export function parseEffectArgs(
  argv: readonly string[],
  envIn: Readonly<Record<string, string | undefined>>,
  dotenv: string | undefined,
  cwd: string,
): AskResult {
  const env = { ...(dotenv ? parseDotenv(dotenv) : {}), ...envIn }
  const parsed = parseCommandLine(argv, EFFECT_OPTIONS)
  if (parsed.help) return { ok: false, help: true, problems: [] }
  if (parsed.version) return { ok: false, version: true, problems: [] }
  const problems: string[] = []
  for (const p of parsed.problems) {
    if (p.kind === 'positional') problems.push(`unexpected argument ${showValue(p.value)}; options start with --`)
    else if (p.kind === 'unknown')
      problems.push(
        `unknown option ${showValue(p.rawName)}${p.swallowed ? ' (its value is not shown)' : ''}${p.meant !== undefined ? `; did you mean --${p.meant}?` : ''}`,
      )
    else if (p.kind === 'needs-value') problems.push(`--${p.flag} needs a value`)
    else problems.push(`--${p.flag} takes no value`)
  }
  const raw = (flag: EffectFlag): { value: string; from: string } | undefined => {
    const o = EFFECT_OPTIONS.find((x) => x.flag === flag)!
    const f = parsed.values.get(flag)
    const found =
      typeof f === 'string'
        ? { value: f, from: `--${flag}` }
        : env[o.env] !== undefined && env[o.env] !== ''
          ? { value: env[o.env]!, from: o.env }
          : undefined
    if (found && /[\0\r\n]/.test(found.value)) {
      problems.push(`${found.from}: must be one line (no newline or NUL)`)
      return undefined
    }
    return found
  }
  const text = (flag: EffectFlag) => raw(flag)?.value ?? null
  const path = (flag: EffectFlag) => (text(flag) === null ? null : resolve(cwd, text(flag)!))
  const duration = (flag: EffectFlag, fallback: string): number => {
    const r = raw(flag)
    const ms = parseDuration(r?.value ?? fallback)
    if (ms === undefined || ms < 10 * 60_000)
      problems.push(
        `${r?.from ?? `--${flag}`}: ${showValue(r?.value ?? fallback)} is not a duration of at least 10m (write it like 6h, 90m, 1h30m)`,
      )
    return ms ?? 0
  }
  const report = path('report')
  const svc = text('svc')
  if (svc !== null && !SVC.test(svc)) problems.push(`${raw('svc')!.from}: ${showValue(svc)} must be a service name of [A-Za-z0-9_.-]`)
  // The engine profile names the series read (--engine as verify's: a built-in or a profile file).
  const engineText = text('engine')
  let profile = loadProfile('radiance', null, cwd) as LoadedProfile
  if (engineText !== null) {
    const loaded = loadProfile(engineText, null, cwd)
    if ('problems' in loaded)
      for (const p of loaded.problems)
        problems.push(
          `${raw('engine')!.from}: ${
            p.message === 'no such file' && !isBuiltinProfile(engineText)
              ? `${showValue(engineText)} is neither a built-in profile (${BUILTIN_PROFILES.join(', ')}) nor a profile file (no such file)`
              : problemText(p)
          }`,
        )
    else profile = loaded
  }
  const knobText = text('knob')
  const knobName = knobText === null ? null : (findKnob(profile.knobs, knobText) ?? null)
  if (knobText !== null && knobName === null)
    problems.push(
      `${raw('knob')!.from}: ${showValue(knobText)} is not a knob of the ${profile.engine.name} profile (${[...profile.knobs.keys()].join(', ')})${engineText === null ? "; another engine's knob needs --engine" : ''}`,
    )
  const knobSpec = knobName === null ? null : profile.knobs.get(knobName)!.spec
  for (const flag of ['value', 'previous'] as const) {
    const v = text(flag)
    const why = v !== null && knobSpec ? valueProblem(knobSpec, v) : undefined
    if (why) problems.push(`${raw(flag)!.from}: ${showValue(v!)} ${why}`)
  }
  const armedText = text('armed-at')
  const armedAtMs = armedText === null ? null : RFC3339.test(armedText) ? Date.parse(armedText.replace(' ', 'T')) : NaN
  if (armedAtMs !== null && !Number.isFinite(armedAtMs))
    problems.push(`${raw('armed-at')!.from}: ${showValue(armedText!)} is not an RFC 3339 time like 2026-03-03T09:00:00Z`)
  const mode = (text('mode') ?? 'live') as EffectMode
  // A replay takes the arm from its recording.
  if (report === null && mode !== 'replay') {
    for (const [flag, v] of [
      ['svc', svc],
      ['knob', knobText],
      ['armed-at', armedText],
    ] as const)
      if (v === null) problems.push(`--${flag} (or EFFECT_${flag.toUpperCase().replace('-', '_')}) is required without --report`)
  }
  const baseText = text('base-url')
  const checkedBase =
    baseText === null ? null : endpointUrl(baseText, 'give the endpoint root alone; effect reads Prometheus, never the endpoint')
  if (checkedBase && 'problem' in checkedBase) problems.push(`${raw('base-url')!.from}: ${checkedBase.problem}`)
  const baseUrl = checkedBase && 'url' in checkedBase ? checkedBase.url : null
  const prometheusUrl = text('prometheus-url')
  const urlWhy = prometheusUrl === null ? undefined : prometheusUrlProblem(prometheusUrl)
  if (urlWhy) problems.push(`${raw('prometheus-url')!.from}: ${urlWhy}`)
  const match = text('prometheus-match')
  const matchWhy = match === null ? undefined : parseMatch(match)
  if (matchWhy && 'error' in matchWhy) problems.push(`${raw('prometheus-match')!.from}: ${showValue(match!, 80)}: ${matchWhy.error}`)
  const beforeMs = duration('before', '24h')
  const afterMs = duration('after', '6h')
  const baseline = (text('baseline') ?? 'like-hours') as BaselineOption
  if (!BASELINE_OPTIONS.includes(baseline))
    problems.push(`${raw('baseline')!.from}: ${showValue(baseline)} is not one of ${BASELINE_OPTIONS.join(', ')}`)
  const metricsText = text('metrics')
  const metrics =
    metricsText === null
      ? null
      : metricsText
          .split(',')
          .map((m) => m.trim())
          .filter(Boolean)
  const unknown = (metrics ?? []).filter((m) => !METRIC_IDS.includes(m))
  if (unknown.length || metrics?.length === 0)
    problems.push(
      `${raw('metrics')!.from}: ${unknown.length ? `${unknown.map((m) => showValue(m)).join(', ')} not a metric id` : 'names no metric'}; the ids: ${METRIC_IDS.join(', ')}`,
    )
  const th = parseThresholds(text('threshold') ?? '')
  if ('error' in th) problems.push(`${raw('threshold')!.from}: ${th.error}`)
  const minText = text('min-count') ?? '100'
  if (!/^\d{1,9}$/.test(minText) || Number(minText) < 1)
    problems.push(`${raw('min-count')?.from ?? '--min-count'}: ${showValue(minText)} is not a whole number ≥ 1`)
  if (!['live', 'record', 'replay'].includes(mode)) problems.push(`${raw('mode')!.from}: ${showValue(mode)} is not live, record or replay`)
  const vault = path('vault')
  if (vault !== null && report === null)
    problems.push(
      '--vault needs --report: the effect is written under the entry of that green report, nothing else identifies the arm on the page',
    )
  const outputs: OutputSpec[] = []
  const out = path('out')
  const summary = path('summary')
  const fixtures = path('fixtures')
  if (out) outputs.push({ option: raw('out')!.from, path: out, kind: 'file' })
  if (summary) outputs.push({ option: raw('summary')!.from, path: summary, kind: 'file' })
  if (envIn.GITHUB_STEP_SUMMARY)
    outputs.push({ option: 'GITHUB_STEP_SUMMARY', path: envIn.GITHUB_STEP_SUMMARY, kind: 'file', append: true })
  if (mode === 'record' && fixtures) outputs.push({ option: raw('fixtures')!.from, path: fixtures, kind: 'folder' })
  for (const o of outputs) {
    const why = outputProblem(o, cwd)
    if (why) problems.push(why)
  }
  // --json, or its env twin: a yes/no word.
  const jsonEnv = env.EFFECT_JSON
  const jsonYes = jsonEnv === undefined || jsonEnv === '' ? false : envBoolean(jsonEnv)
  if (jsonYes === undefined) problems.push(`EFFECT_JSON: ${showValue(jsonEnv!, 40)} is not a yes/no word (1/0, true/false, yes/no, on/off)`)
  const json = parsed.values.get('json') === true || jsonYes === true
  const caFile = path('ca-file')
  if (caFile !== null) {
    try {
      accessSync(caFile, constants.R_OK)
    } catch {
      problems.push(`${raw('ca-file')!.from}: ${showValue(text('ca-file')!)} cannot be read; pass a PEM file of CA certificates`)
    }
  }
  if (problems.length) return { ok: false, problems }
  return {
    ok: true,
    ask: {
      report,
      svc,
      knob: knobName,
      knobSpec,
      engine: engineText,
      profile,
      value: text('value'),
      previous: text('previous'),
      armedAtMs,
      baseUrl,
      prometheusUrl: prometheusUrl?.replace(/\/+$/, '') ?? null,
      match,
      beforeMs,
      afterMs,
      baseline,
      metrics,
      thresholds: 'error' in th ? {} : th.thresholds,
      minCount: Number(minText),
      out,
      json,
      color: parsed.color,
      summary,
      vault,
      page: text('page'),
      caFile,
      mode,
      fixtures,
    },
  }
}
