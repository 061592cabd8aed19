// `armproof preflight --help`: its text alone (armproof --help and `preflight --help` load only this).
import { command } from '../config/invocation.ts'
import {
  COMMON_SWITCHES,
  METAVARS,
  OPTIONS,
  PREFLIGHT_EXIT_CODES_TEXT,
  PREFLIGHT_OPTIONS,
  PREFLIGHT_VERIFY_FLAGS,
  optionRows,
} from '../config/options.ts'
import { PREFLIGHT_STEPS } from '../steps/preflight/registry.ts'

const OWN_METAVARS: Readonly<Record<string, string>> = { checkout: 'dir', 'env-file': 'path', report: 'path' }

/** verify's options preflight takes, in verify's order, as verify's table has them. */
export const PREFLIGHT_VERIFY_OPTIONS = OPTIONS.filter((o) => (PREFLIGHT_VERIFY_FLAGS as readonly string[]).includes(o.flag))

export function preflightHelp(): string {
  const preflight = command('preflight')
  return [
    "armproof preflight: before the deploy, check what the runbook's first section checks; red means do not deploy.",
    '',
    `Usage: ${preflight} --svc <svc> --knob <knob> --value <value> --previous <value> --base-url <url> [--checkout <dir>] [--env-file <path>] [options]`,
    '',
    'Checks, in order (each line: expected, observed, where, and for a red one the next step):',
    ...PREFLIGHT_STEPS.map((s) => `  ${s.id.padEnd(20)} ${s.title}`),
    '',
    "preflight's own options (env twins PREFLIGHT_*; .env is read; a flag beats env):",
    ...optionRows(PREFLIGHT_OPTIONS, 34, (f) => OWN_METAVARS[f] ?? 'value'),
    '',
    "verify's options it takes, with the same meaning and the same env twins (VERIFY_*):",
    ...optionRows(PREFLIGHT_VERIFY_OPTIONS, 34, (f) => METAVARS[f] ?? 'value'),
    ...COMMON_SWITCHES,
    '',
    "verify's other options (the probes', the meter's, --mode, --fixtures, the fleet's, --junit, --summary) are refused, and their env twins not read; --report and --json are preflight's own (PREFLIGHT_REPORT, PREFLIGHT_JSON), so a VERIFY_REPORT in .env is never overwritten.",
    "A value --value cannot take (an illegal enum, a number below the catalog's bound) is a red check, not a refusal: catching it is what preflight is for.",
    '',
    'Example:',
    `  ${preflight} --svc llm-7 --knob PREFILL_INTERLEAVE --value 1 --previous 0 --base-url http://gpu-7:8000 --host deploy@gpu-7 --checkout ~/src/deploy --env-file env/llm-7.env`,
    '',
    `Exit codes: ${PREFLIGHT_EXIT_CODES_TEXT}`,
  ].join('\n')
}

/** A markdown cell: pipes escaped, one line. */
const cell = (text: string): string => text.replaceAll('|', '\\|').replace(/\s+/g, ' ')

/**
 * The options tables of docs/guide/preflight.md, generated from the option tables (scripts/faults-doc.ts
 * writes them; test/preflight/doc.test.ts keeps them equal): preflight's own, then verify's it takes.
 */
export function preflightOptionsTables(): string {
  const row = (o: { flag: string; env: string; kind: string; meaning: string; default: string }, metavar: string) =>
    `| ${cell(`\`--${o.flag}${o.kind === 'boolean' ? '' : ` <${metavar}>`}\``)} | \`${o.env}\` | ${cell(o.meaning)} | ${cell(o.default)} |`
  return [
    "preflight's own options:",
    '',
    '| flag | env | meaning | default |',
    '|---|---|---|---|',
    ...PREFLIGHT_OPTIONS.map((o) => row(o, OWN_METAVARS[o.flag] ?? 'value')),
    '',
    "verify's options preflight takes, with verify's meaning, default and env twin:",
    '',
    '| flag | env | meaning | default |',
    '|---|---|---|---|',
    ...PREFLIGHT_VERIFY_OPTIONS.map((o) => row(o, METAVARS[o.flag] ?? 'value')),
  ].join('\n')
}
