// The checks of `armproof preflight`, once: their ids (stable: reports, docs and scripts key by
// them), their runbook sentences, and what makes each red, in the words the docs' table is
// generated from. Preflight is the runbook's "before" half: red means "do not deploy".
import type { StepFields } from '../verdict.ts'

const IDS = [
  'preflight.help',
  'preflight.value',
  'preflight.previous',
  'preflight.dropins',
  'preflight.checkout',
  'preflight.env-file',
] as const

export type PreflightStepId = (typeof IDS)[number]

/** Preflight's step ids, in run order. */
export const PREFLIGHT_STEP_IDS: readonly PreflightStepId[] = IDS

export interface PreflightStepSpec {
  readonly id: PreflightStepId
  /** The runbook sentence (the terminal's and the report's title). */
  readonly title: string
  /** What the check proves when it passes (markdown). */
  readonly proves: string
  /** What makes it red, and what its next step says to fix (markdown). */
  readonly red: string
}

export const PREFLIGHT_STEPS = [
  {
    id: 'preflight.help',
    title: "the running engine's --help lists the flag",
    proves:
      "the knob's flag is defined by the `--help` of the build that runs now, read as verify's `help` step reads it (`--help-cmd`: the runtime's exec into the running container, or the binary the engine process runs): not a vendored tree, not another build first on PATH",
    red: 'the flag is not defined there (a misspelt flag in a `--catalog` file, a knob this build lacks): do not promise it; check the pinned image tag. Inconclusive when the help command could not run',
  },
  {
    id: 'preflight.value',
    title: 'the value is legal for the flag, and differs from --previous',
    proves:
      "`--value` fits the knob's type and the catalog's bounds (a whole number ≥ its minimum, `true`/`false`, `auto`), is one of the choices `--help` prints for an enum, and differs from `--previous` (else there is nothing to arm)",
    red: 'an illegal value (`config_parse` refuses an unknown enum at boot: a crash loop right after the deploy), or the same value as `--previous`: fix `--value` and the env file',
  },
  {
    id: 'preflight.previous',
    title: 'the engine runs --previous now',
    proves:
      "the engine serving `--base-url` runs `--previous` now, as verify's `argv` and `ledger` steps read it (its `/proc/<pid>/cmdline` as its parser reads it, env twin included; the boot ledger's resolved line): the truth the rollback line relies on",
    red: 'the engine runs another value, or no engine serves the endpoint: give `--previous` what it runs (the rollback line restores it), or find out why it runs another before arming',
  },
  {
    id: 'preflight.dropins',
    title: 'no drop-in is left on the unit',
    proves:
      "`systemctl show <unit> -p DropInPaths` is empty, before the deploy (verify's `dropins` step: skipped, saying why, under `--no-dropin-check` or a runtime with no unit)",
    red: 'a drop-in (often left by a bench) would override the env the deploy ships: remove it and `systemctl daemon-reload` first',
  },
  {
    id: 'preflight.checkout',
    title: 'the deploy checkout is on main, with no change and no untracked file',
    proves:
      '`--checkout` (default: the current folder) is a git checkout on branch `main` and `git status --porcelain --untracked-files=all` prints nothing: `deploy.sh` ships exactly what `main` holds',
    red: 'another branch, a detached HEAD, a changed or untracked file, or no git checkout at all: switch to main, commit or remove the changes (`git stash -u` takes untracked files too). Inconclusive when git could not say (not installed, or it refuses the folder)',
  },
  {
    id: 'preflight.env-file',
    title: "the env file changes the knob's variable alone",
    proves:
      "`--env-file` (relative to the checkout) sets the knob's variable (or its env twin) to `--value`, or leaves it unset where `--value` is the default, and every other variable it sets equals the engine's running environment (its `/proc/<pid>/environ`, where argv reads the env twin); skipped, saying so, without `--env-file`",
    red: "another variable differs (each is named, with both values unless its name or value looks secret), or the knob's variable is not set to `--value`: one change per deploy. Inconclusive when a line is outside the subset every reader agrees on, or the engine's environment could not be read",
  },
] as const satisfies readonly PreflightStepSpec[]

/** The entries carry the ids, each once, in their order: a check added here without its id fails to compile. */
type IdsOf<T> = { readonly [K in keyof T]: T[K] extends { readonly id: infer I } ? I : never }
const _sameOrder: IdsOf<typeof PREFLIGHT_STEPS> extends typeof IDS ? true : false = true
void _sameOrder

export function preflightTitle(id: PreflightStepId): string {
  return PREFLIGHT_STEPS.find((s) => s.id === id)!.title
}

/** One check's result: verify's step fields, its own id, and its evidence (a free-form object, each check's own fields). */
export type PreflightStepResult = Omit<StepFields, 'buildDefault'> & { id: PreflightStepId; evidence: Record<string, unknown> }

/** What a check returns; the runner adds id, title and duration. */
export type PreflightJudgement = Omit<PreflightStepResult, 'id' | 'title' | 'durationMs'>

/** The docs' table of the checks (docs/guide/preflight.md, generated by scripts/faults-doc.ts). */
export function preflightStepsTable(): string {
  return [
    '| id | proves | red, and its next step |',
    '|---|---|---|',
    ...PREFLIGHT_STEPS.map((s) => `| \`${s.id}\` | ${s.proves} | ${s.red} |`),
  ].join('\n')
}
