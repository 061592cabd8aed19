// The proof steps, once: their order, runbook titles, groups, the inputs each needs from earlier
// steps, and what each proves (docs/reference/steps.md's table is generated from `proves`). Plain data, so the
// report and the writeback gate read it without loading a judge (the recording's schema, below the
// steps, reads only the ids: helpers/config/step-ids.ts); the judges are bound to these ids in
// ./judges.ts, and suites/arm.test.ts derives one test per entry.
import type { StepId, StepIdOrder } from '../config/step-ids.ts'

/** What a step may receive from the steps before it (see ./context.ts `StepInputs`). */
export type StepInput =
  /** The build's default for the knob, as its --help prints it (step `help`). */
  | 'buildDefault'
  /** The choices its --help lists for an enum knob's flag (step `help`). */
  | 'buildChoices'
  /** Every flag its --help lists, for reading argv as the engine's parser does (step `help`). */
  | 'buildFlags'
  /** /health answered 200 (step `health`). */
  | 'healthy'
  /** The one engine process step `argv` read, and whether its command line held. */
  | 'engineProcess'
  /** /metrics read before the probes' traffic. */
  | 'baseline'
  /** The served model id the probes resolved. */
  | 'model'
  /** How long steps `argv` and `ledger` waited for loading to end (to tie the endpoint, to read the log): the health budget counts it. */
  | 'loadWait'
  /** The engine's whole command line as step `argv` read it (never shown as is: it may hold secrets). */
  | 'engineCommand'

/**
 * The runbook's sections by id, each with its title (a `describe` of the suite). Code keys a
 * section by its id (./judges.ts `BEFORE_GROUP`), never by its title, so rewording a title
 * changes only what is shown.
 */
export const SECTIONS = {
  preflight: 'preflight',
  flag: 'the flag reached the engine',
  serves: 'the endpoint serves',
  behaviour: 'behaviour survived',
  counter: "the engine's own counter",
  law: 'one change at a time',
} as const satisfies Readonly<Record<string, string>>

export type SectionId = keyof typeof SECTIONS

export interface StepSpec {
  readonly id: string
  /** The runbook section the step belongs to (its id in `SECTIONS`). */
  readonly group: SectionId
  /** The runbook sentence (the test's name, the report's title). */
  readonly title: string
  /** The sentence when the run rolls back to the default, where it differs. */
  readonly titleAtDefault?: string
  /** The sentence for an engine whose answer carries none of radiance's fields (its profile's `health:`), where it differs. */
  readonly titlePlain?: string
  readonly inputs: readonly StepInput[]
  /** Runs side by side with the other steps of its group that say so (the three probes). */
  readonly sideBySide?: boolean
  /** What the step proves, in the docs' words (markdown). */
  readonly proves: string
}

export const STEPS = [
  {
    id: 'dropins',
    group: 'preflight',
    title: 'no drop-in is left on the unit',
    inputs: [],
    proves:
      '`systemctl show <unit> -p DropInPaths` is empty (`--no-dropin-check` shows it skipped, never passed; so does a runtime with no unit for the engine: a pod, a docker container or a bare process without `--unit`)',
  },
  {
    id: 'help',
    group: 'flag',
    title: "the pinned build's --help lists the flag",
    inputs: [],
    proves: "the flag exists in the pinned build's `--help`; an enum value is one of the choices printed there",
  },
  {
    id: 'argv',
    group: 'flag',
    title: "the engine's command line carries the flag, or rightly lacks it at the default",
    inputs: ['buildDefault', 'buildFlags'],
    proves:
      "the engine is the process that serves the base URL: of the processes holding its port's listening socket, the one named `--process` (else the runtime's own step: the engine in `{svc}`'s container under podman or docker, the one listening on a port its pod declares under kubernetes, whose `/proc` is read through `kubectl exec`; else `--pid-cmd`, else the one `pidof --process` finds; other engines of that name are named with their ports); its `/proc/<pid>/cmdline`, read as its parser reads it (`_` for `-`, a unique prefix, the last occurrence wins, a `--config FILE` beneath the command line), resolves the flag to the value, or lacks a conditional flag at its default",
  },
  {
    id: 'ledger',
    group: 'flag',
    title: 'the boot ledger resolved the expected value',
    inputs: ['buildDefault', 'loadWait', 'engineProcess'],
    proves:
      "the boot ledger's latest resolved line equals the expected value, read once `/health` answers 200 (an engine prints what it resolved when loading ends; still loading past `--health-budget` is inconclusive, never red; where the log stamps its lines, a latest boot stamped before the pid argv read started is an earlier process's: inconclusive); `[auto]` and `bound by X` reported; a clamped value is red. Only a resolved line counts: after its log prefix the message begins with the flag and its value and names no other flag (`--checkpoint-slots 20 [auto] … bound by None`); a command-line echo (`+ exec radiance serve … --checkpoint-slots 16`) is not one",
  },
  {
    id: 'health',
    group: 'serves',
    title: '/health answers 200 with in_flight and queue_cap',
    titlePlain: '/health answers 200 as the engine does when ready',
    inputs: ['loadWait'],
    proves:
      "`GET /health` is 200 within `--health-budget` with what the engine profile's health semantics ask: radiance's numeric `in_flight` and `queue_cap`, llama.cpp's `\"status\": \"ok\"`, vLLM's and SGLang's empty 200 (`body: empty`); refused and 503 count as loading. An HTML page (a gateway's), or a body where the engine answers none, is not the engine: an operator's mistake (exit 2, the step not judged), its evidence `failureKind: not-the-engine`, the fix the base URL",
  },
  {
    id: 'probe.exact',
    group: 'behaviour',
    sideBySide: true,
    title: 'it answers the exact word at temperature 0',
    inputs: ['healthy', 'model'],
    proves:
      "temperature 0 answers the literal word in `content` (reasoning in `reasoning_content` or `reasoning` is fine): after reasoning, whitespace, surrounding quotes/backticks/emphasis and one final punctuation mark, the reply is the word; a sentence containing it is red. As for every probe, the reply must be the engine's: its `model` the one asked (another served name of it that `/v1/models` ties by `root`, or OpenAI's dated snapshot, is accepted; any other id is red), its `id` no other probe's (one reply for distinct requests is red), its `created` no more than 5 min before the request (older: a cache answered, inconclusive)",
  },
  {
    id: 'probe.tools',
    group: 'behaviour',
    sideBySide: true,
    title: 'it returns a real tool call',
    inputs: ['healthy', 'model'],
    proves:
      "`tools` with `tool_choice: auto` gives a real `tool_calls` entry with parseable arguments (the reply the engine's, as for `probe.exact`); `--skip probe.tools` (no tool parser on purpose) shows it skipped, never passed",
  },
  {
    id: 'probe.vision',
    group: 'behaviour',
    sideBySide: true,
    title: 'it names the colour of a solid PNG sent as image_url',
    inputs: ['healthy', 'model'],
    proves:
      'a solid-colour PNG made in-process, sent as an `image_url` data URL with `max_tokens ≥ 512`, is named by its colour as the reply\'s answer, read as a reader reads it ("It is not blue; it is orange." answers orange): the colour denied, the decoy given as the answer, or several candidate colours are red; the prompt names only a decoy colour (the reply the engine\'s, as for `probe.exact`); `--skip probe.vision` (a text-only model) shows it skipped, never passed',
  },
  {
    id: 'meter',
    group: 'counter',
    title: "the knob's meter left zero",
    titleAtDefault: "the knob's meter stays at zero while traffic flows",
    inputs: ['buildDefault', 'buildChoices', 'healthy', 'engineProcess', 'baseline', 'model'],
    proves:
      "the served engine's own series of the knob's counter (`model_name` = the probed model; another model's series never counts) rose during this run's traffic within `--meter-window`, or was already above zero at the first scrape of the very process `argv` read (said apart: \"moved before this run\"); at the default it stays at zero while traffic flows. Absent is not zero (a counter family declared with no sample yet is zero so far); no traffic is inconclusive; a drop (a restart), a non-finite value, a series twice in one page, a family not declared a counter, or a page Prometheus would refuse whole is never green. Each page is bound to the pid `argv` read by its `process_start_time_seconds` (or that pid's listening socket): another process's page, or one tied to nothing, is never green. Not watched when `/health` never answered 200. Read from `/metrics`, or through Prometheus with `--prometheus-url` (targets counted from `up`, `up == 0` not observed, a partial answer proves no absence)",
  },
  {
    id: 'one-flag',
    group: 'law',
    title: 'nothing but the knob changed since the last green record',
    inputs: ['buildFlags', 'engineCommand', 'model'],
    proves:
      "the one-flag law: the engine's whole command line as its parser reads it (every flag and value, `--config` file and the profile's env twins included; secret-looking values never recorded), its binary (`/proc/<pid>/exe`'s path, size and mtime) or image (the id `podman`/`docker inspect` or the pod's status reports) and its served model differ from the service's last green record (`--baseline-report FILE`, else the newest armproof entry on its `--vault` page) in the knob's flag and env twin alone; anything else that differs is named with both values and is red (two changes: the arm cannot be credited). Skipped, saying why, where there is no earlier record; the record read now goes into the report and beside the vault entry, the next arm's baseline",
  },
] as const satisfies readonly StepSpec[]

export { STEP_IDS, type StepId } from '../config/step-ids.ts'

// The entries carry the contract's ids (helpers/config/step-ids.ts), each once, in its order: a
// step added, dropped or moved here without its id there fails to compile.
type IdsOf<T> = { readonly [K in keyof T]: T[K] extends { readonly id: infer I } ? I : never }
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : ['differs', A, B]) : ['differs', A, B]
const _sameOrder: Same<IdsOf<typeof STEPS>, StepIdOrder> = true
void _sameOrder

/** Runbook titles by id (the armed sentence). */
export const STEP_TITLES: Readonly<Record<StepId, string>> = Object.fromEntries(STEPS.map((s) => [s.id, s.title])) as Record<StepId, string>

/** The step's entry. */
export function stepSpec(id: StepId): StepSpec {
  return STEPS.find((s) => s.id === id)!
}

/**
 * The runbook sentence of one step for this run: where the meter must stay at zero, the rollback's
 * own wording; for an engine whose /health carries no fields of radiance's (`plainHealth`), its own.
 */
export function stepTitle(id: StepId, atDefault: boolean, plainHealth = false): string {
  const spec: StepSpec = stepSpec(id)
  if (plainHealth && spec.titlePlain) return spec.titlePlain
  return atDefault && spec.titleAtDefault ? spec.titleAtDefault : spec.title
}

/** One runbook section of the run: its id (what code keys by), its title (what is shown), its steps. */
export interface StepGroup {
  readonly section: SectionId
  readonly title: string
  readonly ids: StepId[]
  readonly sideBySide: boolean
}

/** The runbook's sections in order, each with its steps. */
export function stepGroups(): StepGroup[] {
  const groups: StepGroup[] = []
  for (const s of STEPS as readonly StepSpec[]) {
    const last = groups.at(-1)
    if (last?.section === s.group) last.ids.push(s.id as StepId)
    else groups.push({ section: s.group, title: SECTIONS[s.group], ids: [s.id as StepId], sideBySide: s.sideBySide === true })
  }
  return groups
}

/** docs/reference/steps.md's proof-steps table, generated from `proves` (test/steps/registry.test.ts keeps the page equal). */
export function stepsTable(): string {
  return ['| id | proves |', '|---|---|', ...STEPS.map((s) => `| \`${s.id}\` | ${s.proves} |`)].join('\n')
}
