// The options of `pnpm writeback` as data, and the one-line refusals every check reports in.
// Flags beat env (`WRITEBACK_*`); no .env is read here, and env values are never printed.
import { resolve } from 'node:path'
import { envBoolean, parseCommandLine } from '../config/command-line.ts'
import { parseDuration } from '../config/duration.ts'
import { COMMON_SWITCHES, optionRows, WRITEBACK_OPTIONS } from '../config/options.ts'
import { showValue } from '../config/shell.ts'
import { escapeControls } from './escape.ts'
import { command } from '../config/invocation.ts'

/** One refusal: what was checked, where it looked, what it found, and what to do next. One line. */
export interface Refusal {
  checked: string
  where: string
  found: string
  next: string
}

/** One line whatever the fields hold: control, line-breaking and bidi characters are shown escaped. */
export function refusalLine(r: Refusal): string {
  return `  - ${escapeControls(r.checked)} (${escapeControls(r.where)}): ${escapeControls(r.found)}; next: ${escapeControls(r.next)}`
}

export function formatRefusals(refusals: readonly Refusal[]): string {
  const n = refusals.length
  return [`armproof writeback: refused (${n} problem${n === 1 ? '' : 's'}); the vault was not changed.`, ...refusals.map(refusalLine)].join(
    '\n',
  )
}

export { WRITEBACK_OPTIONS } from '../config/options.ts'

type Flag = (typeof WRITEBACK_OPTIONS)[number]['flag']

export interface WritebackOptions {
  report: string
  vault: string
  /** As given (relative to the vault unless absolute), or null for discovery. */
  page: string | null
  svc: string | null
  maxAgeMs: number
  maxAgeText: string
  dryRun: boolean
  allowReplay: boolean
}

export type OptionsResult = { ok: true; options: WritebackOptions } | { ok: false; help: boolean; version?: boolean; refusals: Refusal[] }

const DEFAULT_MAX_AGE = '24h'

export function writebackHelp(): string {
  const rows = optionRows(WRITEBACK_OPTIONS, 20)
  return [
    "armproof writeback: write a green, fresh report's meter and rollback line into the endpoint's existing vault page.",
    '',
    `Usage: ${command('writeback')} --report <file> --vault <dir> [--page <path>] [--svc <svc>] [--max-age 24h] [--dry-run] [--allow-replay]`,
    '',
    'Options (each has an env twin; a flag beats env):',
    ...rows,
    ...COMMON_SWITCHES,
    '',
    `A fleet report (${command('verify')} --targets … --report): validated whole before any page is touched; each target is judged by the same gate; a service whose targets all passed gets one entry per target (each naming its endpoint) in its own page, a service with any refused target gets none, naming it (--svc narrows to one service; --page is refused).`,
    '',
    'Exit codes: 0 written, or already there (a fleet: every target) · 2 refused or usage error (the vault is left as it was; a fleet: no target written) · 5 a fleet report: some pages written, some refused (the lines say which page took which entries)',
  ].join('\n')
}

/** Flags and env → options; every problem at once, never throws. Paths resolve against `cwd`. */
export function parseWritebackOptions(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): OptionsResult {
  const refusals: Refusal[] = []
  const usage = (checked: string, where: string, found: string, next = `see ${command('writeback')} --help`) =>
    refusals.push({ checked, where, found, next })
  const parsed = parseCommandLine(argv, WRITEBACK_OPTIONS)
  if (parsed.help) return { ok: false, help: true, refusals: [] }
  if (parsed.version) return { ok: false, help: false, version: true, refusals: [] }
  for (const p of parsed.problems) {
    if (p.kind === 'positional')
      usage(
        'arguments',
        'command line',
        `unexpected argument ${showValue(p.value)}`,
        `options start with --; see ${command('writeback')} --help`,
      )
    else if (p.kind === 'unknown')
      usage(
        p.rawName,
        'command line',
        `unknown option ${showValue(p.rawName)}${p.swallowed ? ' (its value is not shown)' : ''}${p.meant !== undefined ? `; did you mean --${p.meant}?` : ''}`,
      )
    else if (p.kind === 'needs-value') usage(`--${p.flag}`, 'command line', 'needs a value')
    else usage(`--${p.flag}`, 'command line', 'takes no value')
  }
  const flags = parsed.values
  const raw = (flag: Flag): { value: string; from: string } | undefined => {
    const o = WRITEBACK_OPTIONS.find((x) => x.flag === flag)!
    const f = flags.get(flag)
    if (typeof f === 'string') return { value: f, from: `--${flag}` }
    const e = env[o.env]
    return e === undefined ? undefined : { value: e, from: o.env }
  }
  const required = (flag: Flag): string | undefined => {
    const r = raw(flag)
    if (r && r.value !== '') return r.value
    const o = WRITEBACK_OPTIONS.find((x) => x.flag === flag)!
    usage(
      `--${flag}`,
      `command line and ${o.env}`,
      'is required',
      flag === 'report' ? `pass the file ${command('verify')} wrote with --report` : 'pass the vault checkout folder',
    )
    return undefined
  }
  const bool = (flag: Flag): boolean => {
    if (flags.get(flag) === true) return true
    const r = raw(flag)
    if (!r) return false
    const yes = envBoolean(r.value)
    if (yes === undefined) usage(r.from, 'env', `${showValue(r.value)} is not 1/0/true/false`)
    return yes === true
  }
  const report = required('report')
  const vault = required('vault')
  const page = raw('page')?.value || null
  const svc = raw('svc')?.value || null
  const ageRaw = raw('max-age')
  const maxAgeText = ageRaw && ageRaw.value !== '' ? ageRaw.value.trim() : DEFAULT_MAX_AGE
  const maxAgeMs = parseDuration(maxAgeText)
  if (maxAgeMs === undefined || maxAgeMs <= 0) {
    usage(
      ageRaw?.from ?? '--max-age',
      ageRaw?.from.startsWith('--') ? 'command line' : 'env',
      `${showValue(maxAgeText)} is not a positive duration`,
      'write it like 24h, 90m or 1h30m',
    )
  }
  const dryRun = bool('dry-run')
  const allowReplay = bool('allow-replay')
  if (refusals.length > 0 || report === undefined || vault === undefined || maxAgeMs === undefined)
    return { ok: false, help: false, refusals }
  return {
    ok: true,
    options: { report: resolve(cwd, report), vault: resolve(cwd, vault), page, svc, maxAgeMs, maxAgeText, dryRun, allowReplay },
  }
}
