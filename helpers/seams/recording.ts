// A recording read back and checked (./recording-files.ts says what its files hold): each file
// against its schema (./recording-schema.ts), then against the digests the recorder wrote
// (./digest.ts), so an edited recording is refused; then whether it fits the run the command line
// asks for, and the target a replay runs with.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ConfigProblem, Target } from '../config/load.ts'
import { endsEarly } from '../schema/schema.ts'
import { fileDigests, recordingDigest } from './digest.ts'
import {
  FIXTURE_FILES,
  FIXTURE_FORMAT,
  FixtureError,
  type FixtureSet,
  type HostExchange,
  type HttpExchange,
  type RunMeta,
  recordedTarget,
} from './recording-files.ts'
import { RECORDING_SCHEMAS } from './recording-schema.ts'

/**
 * The target a replay runs with. What is judged (svc, knob, value, previous) comes from one source,
 * the command line, which `replayCheck` has checked against the recording; the rest of the recorded
 * run's options (process, commands, budgets) from the recording; outputs, key and ssh identity from
 * this invocation, never from the recording, even one whose run.json was edited to carry them
 * (`recordedTarget` says which are never recorded).
 */
export function replayTarget(target: Target, meta: RunMeta): Target {
  return {
    ...target,
    ...recordedTarget(meta.target as Target),
    svc: target.svc,
    knob: target.knob,
    value: target.value,
    previous: target.previous ?? meta.target.previous,
    mode: 'replay',
    // A recording made before the one-flag law has none: its replay skips the step (it read nothing for it).
    baseline: (meta.target as Partial<Target>).baseline,
  }
}

/** The files' text, read as they are on disk (a BOM is accepted and dropped). */
function readTexts(folder: string): Record<(typeof FIXTURE_FILES)[number], string> {
  const out: Partial<Record<(typeof FIXTURE_FILES)[number], string>> = {}
  for (const name of FIXTURE_FILES) {
    const path = join(folder, name)
    try {
      out[name] = readFileSync(path, 'utf8').replace(/^\uFEFF/, '')
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      throw new FixtureError(
        'ARMPROOF_FIXTURES_MISSING',
        code === 'ENOENT' || name !== 'run.json' ? `no recording at ${path}` : `${path} cannot be read (${code ?? 'error'})`,
      )
    }
  }
  return out as Record<(typeof FIXTURE_FILES)[number], string>
}

/** Parses and checks one file against its schema; a problem names the file and the field. */
function parseChecked(folder: string, name: (typeof FIXTURE_FILES)[number], text: string): unknown {
  const path = join(folder, name)
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch (error) {
    const early = endsEarly(text, error)
    throw new FixtureError('ARMPROOF_FIXTURES_INVALID', `${path} is not valid JSON${early ? ' (it ends early: truncated?)' : ''}`)
  }
  if (name === 'run.json' && data && typeof data === 'object' && (data as RunMeta).format !== FIXTURE_FORMAT) {
    throw new FixtureError(
      'ARMPROOF_FIXTURES_INVALID',
      `${path} has format ${JSON.stringify((data as RunMeta).format)}; this armproof reads format ${FIXTURE_FORMAT}`,
    )
  }
  const r = RECORDING_SCHEMAS[name].check(data, '')
  if (!r.ok) throw new FixtureError('ARMPROOF_FIXTURES_INVALID', `${path}: field ${r.path || '(the whole file)'} ${r.problem}`)
  // The file as written, every field kept (the checked value drops the fields it does not name):
  // its digest is taken over what the recorder wrote, and a replay runs with every recorded option.
  return data
}

/** The files whose content no longer matches the digests recorded in run.json. */
function editedFiles(meta: RunMeta, texts: Record<(typeof FIXTURE_FILES)[number], string>): string[] {
  const now = fileDigests(meta, texts)
  return FIXTURE_FILES.filter((f) => meta.digests![f] !== now[f])
}

/** The recording's files parsed and checked against their schemas; `texts` when they were read already (the digests are then of what is parsed). */
export function readFixtures(folder: string, texts: Record<(typeof FIXTURE_FILES)[number], string> = readTexts(folder)): FixtureSet {
  const meta = parseChecked(folder, 'run.json', texts['run.json']) as RunMeta
  return {
    meta,
    http: parseChecked(folder, 'http.json', texts['http.json']) as HttpExchange[],
    host: parseChecked(folder, 'host.json', texts['host.json']) as HostExchange[],
  }
}

/**
 * A recording that is whole and unedited, or the problem (one line naming the file and field).
 * `digest`, when given, must equal the recording's digest (a replay report's).
 */
export function checkRecording(folder: string, digest?: string): { set: FixtureSet; digest: string } | { problem: string } {
  let set: FixtureSet
  let texts: Record<(typeof FIXTURE_FILES)[number], string>
  try {
    texts = readTexts(folder)
    set = readFixtures(folder, texts)
  } catch (error) {
    if (!(error instanceof FixtureError)) throw error
    return { problem: error.message }
  }
  if (!set.meta.digests)
    return {
      problem: `${join(folder, 'run.json')}: field digests is missing: recorded by an older armproof, its files cannot be checked; re-record it`,
    }
  const edited = editedFiles(set.meta, texts)
  if (edited.length)
    return {
      problem: `fixtures edited since recording: ${edited.map((f) => join(folder, f)).join(', ')} no longer match the digests in run.json; re-record instead of editing`,
    }
  const whole = recordingDigest(set.meta.digests)
  if (digest !== undefined && digest !== whole)
    return { problem: `fixtures edited since recording: ${folder} is not the recording this report replayed (digest differs)` }
  return { set, digest: whole }
}

/** For writeback: null when the recording at `folder` is the unedited one with this digest, else the problem. */
export function verifyRecording(folder: string, digest: string): string | null {
  const r = checkRecording(folder, digest)
  return 'problem' in r ? r.problem : null
}

/**
 * Before a replay contacts nothing: the fixtures exist, are whole and unedited, agree with
 * themselves (top-level svc/knob/value/previous equal `target.*`), and were recorded for the svc,
 * knob and value of the command line (and its --previous, when given). Returns the problems (exit 2).
 */
export function replayCheck(
  folder: string,
  want: { svc: string; knob: string; value: string | null; previous?: string | null },
): { problems: string[]; meta?: RunMeta; digest?: string } {
  const checked = checkRecording(folder)
  if ('problem' in checked) {
    const missing = checked.problem.startsWith('no recording at')
    return { problems: [`--fixtures: ${checked.problem}${missing ? '; record one with --mode record' : ''}`] }
  }
  const meta = checked.set.meta
  const problems: string[] = []
  const show = (v: string | null) => (v === null ? 'the default' : v)
  const run = join(folder, 'run.json')
  for (const f of ['svc', 'knob', 'value', 'previous'] as const) {
    if (meta[f] !== meta.target[f])
      problems.push(
        `--fixtures: ${run} disagrees with itself: ${f} is ${JSON.stringify(meta[f])} but target.${f} is ${JSON.stringify(meta.target[f])}; re-record instead of editing`,
      )
  }
  if (problems.length) return { problems }
  if (meta.svc !== want.svc) problems.push(`--fixtures: ${folder} was recorded for --svc ${meta.svc}, not ${want.svc}`)
  if (meta.knob !== want.knob) problems.push(`--fixtures: ${folder} was recorded for --knob ${meta.knob}, not ${want.knob}`)
  if (meta.value !== want.value)
    problems.push(`--fixtures: ${folder} was recorded for --value ${show(meta.value)}, not ${show(want.value)}`)
  if (want.previous !== undefined && want.previous !== null && meta.previous !== want.previous)
    problems.push(`--fixtures: ${folder} was recorded for --previous ${show(meta.previous)}, not ${want.previous}`)
  return { problems, meta, digest: checked.digest }
}

/**
 * The target a run goes with: as given for live and record; for replay, the command line's
 * target with the recorded run's other options, after checking the recording fits (else the
 * problems, exit 2).
 */
export function targetForRun(target: Target): { target: Target } | { problems: ConfigProblem[] } {
  if (target.mode !== 'replay') return { target }
  const check = replayCheck(target.fixtures, target)
  if (check.problems.length > 0) return { problems: check.problems.map((message) => ({ option: '--fixtures', message })) }
  return { target: replayTarget(target, check.meta!) }
}
