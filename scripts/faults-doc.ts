// pnpm faults-doc: writes docs/faults.md from the fault matrix (test/support/fault-matrix.ts, and
// the other engines' test/support/profile-matrix.ts), docs/writeback-faults.md from the writeback
// and replay fault table (test/support/writeback-faults.ts), the proof-steps table of
// docs/reference/steps.md (the step registry) and the tables of docs/reference/profiles.md (each
// engine profile's knobs and sources), docs/guide/preflight.md's tables (its checks, its options),
// the pages of scripts/reference-doc.ts (every command's
// --help, the exit codes, serve's metrics, docs/troubleshooting.md), so the docs cannot drift from
// the code and the tests (test/scripts/faults-doc.test.ts, test/scripts/reference-doc.test.ts,
// test/writeback/faults.test.ts, test/steps/registry.test.ts and test/profiles/doc.test.ts check they
// are equal), and helpers/profiles/builtin.json, the built-in profiles' YAML files as the data a run
// reads (test/profiles/load.test.ts keeps it equal).
// With --measure it also runs every case live and prints each time to verdict against its budget.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { FAULTS } from '../engine/faults.ts'
import { PROFILE_FAULTS } from '../engine/profiles/faults.ts'
import { STEPS, stepsTable } from '../helpers/steps/registry.ts'
import { PREFLIGHT_STEPS, preflightStepsTable } from '../helpers/steps/preflight/registry.ts'
import { preflightOptionsTables } from '../helpers/cli/preflight-help.ts'
import { EXIT_CODES } from '../helpers/steps/verdict.ts'
import {
  END_TO_END,
  FAULT_MATRIX,
  FIRST_CONTACT_ELSEWHERE,
  HEAVY,
  SURROUNDINGS,
  runtimeArgs,
  type FaultCase,
} from '../test/support/fault-matrix.ts'
import { PROFILE_MATRIX } from '../test/support/profile-matrix.ts'
import { BUILTIN_PROFILES, builtinFromData, builtinProfileData, builtinProfilesJson } from '../helpers/profiles/load.ts'
import { readmeWithProfileTables } from '../helpers/profiles/table.ts'
import { SERVE_OPTIONS, withServeOptionsTable } from '../helpers/serve/options.ts'
import { FIRST_CONTACT_TIMEOUT_MS } from '../helpers/steps/first-contact/contact.ts'
import { FAST } from '../test/support/run-verify.ts'
import { RACE, WRITEBACK_FAULTS } from '../test/support/writeback-faults.ts'
import { AREAS } from '../test/support/fault-row.ts'
import { PROM_FAST, PROMETHEUS_FAULTS, type Through } from '../test/support/prometheus-faults.ts'
import { COMMANDS_DIR, referencePages } from './reference-doc.ts'

const THROUGH: Readonly<Record<Through, string>> = {
  twins: 'job `twins`: this engine and a second replica (armed, its counter above zero), both relabelled to instance="127.0.0.1"',
  lossy:
    'job `lossy`: /metrics through a relay that fails every scrape from the first that shows traffic (up == 0); the engine keeps serving',
  'short lookback': '`--query.lookback-delta=500ms`, scrape interval 2 s',
  'partial response': 'a remote_read endpoint that refuses connections, asked for recent data: every answer carries a warning',
}

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ')

export function faultsMarkdown(): string {
  const mistakes = FAULT_MATRIX.filter((c) => c.mistake !== undefined).map((c) => {
    const faults = (c.engine.faults ?? []).map((f) => `--fault ${f}`).join(' ')
    const flags = [
      ...Object.entries(c.env ?? {}).map(([k, v]) => `${k}=${v}`),
      ...(c.baseUrlShown ? [`--base-url ${c.baseUrlShown}`] : []),
      `--knob ${c.knob}`,
      ...(c.value !== undefined ? [`--value ${c.value}`] : []),
      ...(c.args ?? []),
      ...(faults ? [`(engine: ${faults})`] : []),
    ].join(' ')
    const when =
      c.mistake === 'before contact'
        ? 'at once, before contact: nothing is contacted'
        : `on first contact: one GET /health, then GET /v1/models and HEAD /metrics side by side, each bounded by ${FIRST_CONTACT_TIMEOUT_MS / 1000} s; no budget is waited`
    return `| ${cell(c.fault)} | ${cell(c.what)} | \`${cell(flags)}\` | ${c.verdict} | ${EXIT_CODES[c.verdict]} | ${when} | \`${cell(c.message)}\` |`
  })
  const row = (c: FaultCase): string => {
    const red =
      Object.entries(c.steps)
        .map(([id, v]) => `${id} ${v}`)
        .join(', ') || '—'
    const runtime = runtimeArgs(c, { svc: 'SVC' })
    const flags = [
      ...Object.entries(c.env ?? {}).map(([k, v]) => `${k}=${v}`),
      ...runtime,
      ...(c.baseUrlShown ? [`--base-url ${c.baseUrlShown}`] : []),
      `--knob ${c.knob}`,
      c.value !== undefined ? `--value ${c.value}` : '(default)',
      ...(c.args ?? []),
    ].join(' ')
    const shown = (e: FaultCase['engine']) =>
      [
        ...Object.entries(e.engineEnv ?? {}).map(([k, v]) => `${k}=${v}`),
        ...(e.args ?? []),
        ...(e.faults ?? []).map((f) => `--fault ${f}`),
        ...(e.runtimeFaults ?? []).map((f) => `(runtime: ${f})`),
        ...(e.copies ? [`(${e.copies} processes)`] : []),
        ...(e.dropins ?? []).map((d) => `(drop-in ${d})`),
        ...Object.entries(e.files ?? {}).map(([name, text]) => `(${name}: ${text.trim()})`),
      ].join(' ') || '(defaults)'
    const engine = `${shown(c.engine)}${c.beside ? `; beside it, under the same name: ${shown(c.beside)}` : ''}`
    return `| ${cell(c.fault)} | ${cell(c.what)} | \`${cell(engine)}\` | \`${cell(flags)}\` | ${red} | ${c.verdict} | ${EXIT_CODES[c.verdict]} | ${c.message ? `\`${cell(c.message)}\`` : ''} |`
  }
  const rows = FAULT_MATRIX.filter((c) => c.mistake === undefined).map(row)
  const others = (['vllm', 'sglang', 'llama.cpp'] as const).flatMap((profile) => [
    `### ${profile}`,
    '',
    '| fault | what is wrong | engine | verify | steps not passing | verdict | exit | message contains |',
    '|---|---|---|---|---|---|---|---|',
    ...PROFILE_MATRIX.filter((c) => c.engine.profile === profile).map(row),
    '',
  ])
  return [
    '# Fault matrix',
    '',
    'Generated by `pnpm faults-doc` from `test/support/fault-matrix.ts`; `test/e2e/fault-matrix.test.ts` runs every row',
    `against the reference engine (\`engine/\`) with \`pnpm verify … ${FAST.join(' ')}\` and checks the verdict, the exit code,`,
    'the verdict of every step (steps not listed must pass), and the message. These rows run whole `pnpm verify` processes',
    `(${END_TO_END.join('; ')}); the others judge the same steps in-process with the same configuration, seams and`,
    `report (\`test/support/prove-in-process.ts\`), the heavy ones (${HEAVY.join('; ')}) one after another in \`test/e2e/fault-matrix-heavy.test.ts\`. Do not edit by hand.`,
    '',
    '| fault | what is wrong | engine | verify | steps not passing | verdict | exit | message contains |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    '## The other engines',
    '',
    'Run by `test/e2e/fault-matrix-profiles.test.ts` from `test/support/profile-matrix.ts`, in-process as above: the reference engine',
    "speaking each engine (`startEngine({ profile })`), verified with that engine's profile (`--engine`). Each built-in knob green, and",
    'red at the step that reads what contradicts it; a stale profile said, not failed.',
    '',
    ...others,
    "## The operator's mistakes",
    '',
    'Answered at once with exit 2, the cause and the fix in one line, and never blamed on the engine. These rows run with the',
    'DEFAULT budgets (health 15m, meter window 5m, probe 2m): the test would time out long before a budget was spent. They run',
    `the same \`verify()\` as \`pnpm verify\` in the test's process (\`test/support/verify-in-process.ts\`), except ${FAULT_MATRIX.filter(
      (c) => c.mistake !== undefined && END_TO_END.includes(c.fault),
    )
      .map((c) => c.fault)
      .join('; ')}: a whole \`pnpm verify\` process.`,
    'The measured times to verdict are printed by `pnpm faults-doc --measure`.',
    '',
    '| mistake | what is wrong | verify | verdict | exit | time to verdict | output contains |',
    '|---|---|---|---|---|---|---|',
    ...mistakes,
    ...FIRST_CONTACT_ELSEWHERE.map(
      (f) =>
        `| ${cell(f.fault)} | ${cell(f.what)} | \`${cell(f.verify)}\` | ${f.verdict} | ${EXIT_CODES[f.verdict]} | ${cell(f.when)} | \`${cell(f.message)}\` |`,
    ),
    '',
    '## Faults of the surroundings',
    '',
    'Run through a real `sshd` on loopback by `test/e2e/ssh.test.ts`.',
    '',
    '| fault | what is wrong | steps | verdict | exit | message contains |',
    '|---|---|---|---|---|---|',
    ...SURROUNDINGS.map(
      (f) => `| ${cell(f.fault)} | ${cell(f.what)} | ${cell(f.steps)} | ${f.verdict} | ${EXIT_CODES[f.verdict]} | ${cell(f.message)} |`,
    ),
    '',
    '## Through a real Prometheus',
    '',
    "Run by `test/e2e/prometheus-faults.test.ts` against Debian's Prometheus 2.42 on loopback, scraping each row's engine as the row says;",
    `every step judged in-process with \`--prometheus-url\` and \`${PROM_FAST.join(' ')}\`, the meter step's message checked.`,
    '',
    '| fault | what is wrong | how Prometheus holds the engine | engine | verify | steps not passing | verdict | exit | message contains |',
    '|---|---|---|---|---|---|---|---|---|',
    ...PROMETHEUS_FAULTS.map((c) => {
      const engine = [...(c.engine.args ?? []), ...(c.engine.faults ?? []).map((f) => `--fault ${f}`)].join(' ') || '(defaults)'
      const flags = [
        `--knob ${c.knob}`,
        c.value !== undefined ? `--value ${c.value}` : '(default)',
        '--prometheus-url URL',
        ...(c.match ? [`--prometheus-match '${c.match}'`] : []),
      ].join(' ')
      const red =
        Object.entries(c.steps)
          .map(([id, v]) => `${id} ${v}`)
          .join(', ') || '—'
      return `| ${cell(c.fault)} | ${cell(c.what)} | ${cell(THROUGH[c.through])} | \`${cell(engine)}\` | \`${cell(flags)}\` | ${red} | ${c.verdict} | ${EXIT_CODES[c.verdict]} | \`${cell(c.message)}\` |`
    }),
    '',
    '## Reference engine faults',
    '',
    '| `--fault` | what the engine does |',
    '|---|---|',
    ...FAULTS.map((f) => `| \`${f.name}\` | ${cell(f.description)} |`),
    '',
    '## Faults of the emulated engines',
    '',
    'Switched on with `startEngine({ profile, faults })` (the engine reads them from `RADIANCE_REF_FAULTS`); each breaks one proof step of its engine.',
    '',
    '| profile | fault | what the engine does |',
    '|---|---|---|',
    ...PROFILE_FAULTS.map((f) => `| ${f.profile} | \`${f.name}\` | ${cell(f.description)} |`),
    '',
  ].join('\n')
}

export function writebackFaultsMarkdown(): string {
  const rows = (area: string) =>
    WRITEBACK_FAULTS.filter((f) => f.area === area).map(
      (f) => `| ${cell(f.fault)} | ${cell(f.expected)} | ${f.exit} | \`${cell(f.message)}\` |`,
    )
  return [
    '# Writeback, replay, merge-reports, record and output faults',
    '',
    'Generated by `pnpm faults-doc` from `test/support/writeback-faults.ts`; `test/writeback/faults.test.ts` runs every row',
    "(it does the harm, checks the page, the vault's files and the output) and checks the exit code and the message. Do not edit by hand.",
    '',
    `The concurrency rows: ${RACE.writers} writer processes (forked once, released together each round) for ${RACE.rounds} rounds on a fresh page,`,
    `${RACE.writers * RACE.rounds} writebacks in all, then one round of ${RACE.commands} \`node bin/writeback.ts\` processes, all waiting on the page's lock first.`,
    '',
    'Exit codes: writeback 0 written (or already there), 2 refused, 5 a fleet report partly written (the lines say which pages);',
    'replay as `pnpm verify` (2 refused before replaying; 3 inconclusive: the recording does not hold the run, or the replay did',
    'not re-judge the recorded run); merge-reports 2 refused (nothing written), else the merged worst verdict; record 4: the',
    'verdict stands, the fixtures could not be written.',
    '',
    ...Object.entries(AREAS)
      .flatMap(([area, title]) => [
        `## ${title}`,
        '',
        '| fault | what armproof does | exit | output contains |',
        '|---|---|---|---|',
        ...rows(area),
        '',
      ])
      .slice(0, -1),
    '',
  ].join('\n')
}

const STEPS_BEGIN = '<!-- generated from helpers/steps/registry.ts by `pnpm faults-doc`; test/steps/registry.test.ts keeps it equal -->\n'
const STEPS_END = '\n<!-- end of the generated table -->'

/** The proof steps' page (docs/reference/steps.md) with its table regenerated from the step registry. */
export function readmeWithStepsTable(readme: string): string {
  const a = readme.indexOf(STEPS_BEGIN)
  const b = readme.indexOf(STEPS_END)
  if (a < 0 || b < a) throw new Error('docs/reference/steps.md lacks the markers around the proof-steps table')
  return readme.slice(0, a + STEPS_BEGIN.length) + stepsTable() + readme.slice(b)
}

const PREFLIGHT_STEPS_BEGIN =
  '<!-- generated from helpers/steps/preflight/registry.ts by `pnpm faults-doc`; test/preflight/doc.test.ts keeps it equal -->\n'
const PREFLIGHT_OPTIONS_BEGIN =
  '<!-- generated from helpers/config/options.ts by `pnpm faults-doc`; test/preflight/doc.test.ts keeps it equal -->\n'

/** `text` with what is between `begin` and the next end marker replaced by `table`. */
function between(text: string, begin: string, table: string, file: string): string {
  const a = text.indexOf(begin)
  const b = text.indexOf(STEPS_END, a)
  if (a < 0 || b < a) throw new Error(`${file} lacks the markers ${begin.trim()} … ${STEPS_END.trim()}`)
  return text.slice(0, a + begin.length) + table + text.slice(b)
}

/** docs/guide/preflight.md with its checks table and its options tables regenerated. */
export function preflightGuideWithTables(guide: string): string {
  const file = 'docs/guide/preflight.md'
  return between(
    between(guide, PREFLIGHT_STEPS_BEGIN, preflightStepsTable(), file),
    PREFLIGHT_OPTIONS_BEGIN,
    preflightOptionsTables(),
    file,
  )
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(new URL('../helpers/profiles/builtin.json', import.meta.url), builtinProfilesJson())
  console.log(`helpers/profiles/builtin.json: ${BUILTIN_PROFILES.join(', ')}`)
  const stepsPage = new URL('../docs/reference/steps.md', import.meta.url)
  writeFileSync(stepsPage, readmeWithStepsTable(readFileSync(stepsPage, 'utf8')))
  console.log(`docs/reference/steps.md: the proof-steps table, ${STEPS.length} steps`)
  const profilesPage = new URL('../docs/reference/profiles.md', import.meta.url)
  // The profiles' tables from their YAML files as just written (this process may have read the JSON before).
  const profiles = BUILTIN_PROFILES.map((name) => builtinFromData(name, builtinProfileData(name)))
  writeFileSync(profilesPage, readmeWithProfileTables(readFileSync(profilesPage, 'utf8'), profiles))
  console.log(`docs/reference/profiles.md: the knob and source tables of ${BUILTIN_PROFILES.join(', ')}`)
  const pages = await referencePages()
  const commandsDir = fileURLToPath(new URL(`../${COMMANDS_DIR}`, import.meta.url))
  rmSync(commandsDir, { recursive: true, force: true })
  for (const [path, text] of pages) {
    const file = fileURLToPath(new URL(`../${path}`, import.meta.url))
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, text)
  }
  console.log(`${[...pages.keys()].join(', ')} (${readdirSync(commandsDir).length} commands)`)
  const guide = new URL('../docs/guide/preflight.md', import.meta.url)
  writeFileSync(guide, preflightGuideWithTables(readFileSync(guide, 'utf8')))
  console.log(`docs/guide/preflight.md: the checks table, ${PREFLIGHT_STEPS.length} checks; the options tables`)
  writeFileSync(new URL('../docs/faults.md', import.meta.url), faultsMarkdown())
  const serveGuide = new URL('../docs/guide/serve.md', import.meta.url)
  writeFileSync(serveGuide, withServeOptionsTable(readFileSync(serveGuide, 'utf8')))
  console.log(`docs/guide/serve.md: the table of serve's ${SERVE_OPTIONS.length} options`)
  console.log(`docs/faults.md: ${FAULT_MATRIX.length} cases, ${PROFILE_MATRIX.length} of the other engines, ${FAULTS.length} engine faults`)
  writeFileSync(new URL('../docs/writeback-faults.md', import.meta.url), writebackFaultsMarkdown())
  console.log(`docs/writeback-faults.md: ${WRITEBACK_FAULTS.length} cases`)
  if (process.argv.includes('--measure')) {
    const { needsReady, rowArgs, startRow } = await import('../test/support/row-engines.ts')
    const { runVerify, cleanup } = await import('../test/support/run-verify.ts')
    const budgetMs = 8_000 + 2_000 + 3_000 * 2 + 10_000 * 5
    console.log(`time to verdict per case (budgets: health 8s, meter 2s, probe 3s, host 10s; whole-run bound ${budgetMs / 1000}s)`)
    for (const [i, c] of FAULT_MATRIX.entries()) {
      const row = await startRow(c, `fd${i}`, `rfd-${i}`)
      const { engine } = row
      if (needsReady(c)) await row.waitReady()
      const run = await runVerify(rowArgs(c, engine, row.baseUrl), { engine, ...(c.env ? { env: c.env } : {}) })
      await row.stop()
      console.log(`${String(run.ms).padStart(6)} ms  exit ${run.exitCode}  ${c.fault}${c.mistake ? ' (default budgets)' : ''}`)
      cleanup(run)
    }
  }
}
