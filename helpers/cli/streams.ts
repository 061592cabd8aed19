// Where a verify run's output goes, decided once from the command line, env and the streams:
// `--json` (or VERIFY_JSON=1) puts the JSON report alone on stdout and every line meant for a
// person on stderr; colour is ./color.ts' answer for the stream those lines go to; a terminal
// (not CI) gets the live progress line. helpers/cli/verify.ts and helpers/cli/fleet.ts both ask here.
import type { ConfigProblem } from '../config/load.ts'
import { showValue } from '../config/shell.ts'
import { envBoolean } from '../config/command-line.ts'
import { commandLineLayer, type CommandLine } from '../config/sources.ts'
import { colorChoice, paints, underCi } from './color.ts'
import type { Phase } from './contain.ts'
import type { runArmSuite } from './run-suites.ts'

export interface OutStream {
  write(text: string): unknown
  isTTY?: boolean
  columns?: number
}

export interface RunStreams {
  /** The runbook's lines (header, steps, truth table, verdict, closing line): stdout, or stderr under --json. */
  lines: OutStream
  err: OutStream
  /** stdout under --json, where the report (one JSON document) is the only thing written; else null. */
  json: OutStream | null
  /** ANSI colour on `lines`. */
  color: boolean
  /** Long waits redraw one progress line on stderr (a terminal, not CI). */
  live: boolean
  /** Step lines are cut to this many columns on a terminal; a log keeps them whole (Infinity). */
  width: number
}

export interface StreamsIo {
  rawArgs: readonly string[]
  env: Readonly<Record<string, string | undefined>>
  out: OutStream
  err: OutStream
}

/** The streams and inputs of `pnpm verify`, one target or a fleet (helpers/cli/verify.ts, ./fleet.ts). */
export interface VerifyIo extends StreamsIo {
  cwd: string
  /**
   * Given by the command itself (bin/verify.ts), never by an in-process caller: SIGINT and SIGTERM
   * are then caught, the partial report written, and the process ended with this (130 / 143).
   */
  exit?: (code: number) => void
  /**
   * The one vitest start (helpers/cli/run-suites.ts). Only an in-process caller passes another: a
   * test of what is answered before any proof step passes one that throws if reached.
   */
  runSuites?: typeof runArmSuite
  /**
   * Only an in-process test passes it: called as each phase of the run begins, so that the test
   * can throw there and see the failure contained (helpers/cli/contain.ts). Never a flag.
   */
  enterPhase?: (phase: Phase) => void
  /**
   * Only an in-process test passes it: extra environment for the local host commands of first
   * contact and of the reads it starts ahead (the reference engine's shims on PATH), as a
   * `pnpm verify` child gets in its own env. Without it they see this process's env, the command's own.
   */
  hostEnv?: Record<string, string>
}

/** --json or VERIFY_JSON (a yes/no word); a VERIFY_JSON that is neither is the operator's to fix. */
function jsonWanted(io: Pick<StreamsIo, 'env'>, cli: CommandLine): boolean | ConfigProblem {
  if (cli.layer.values.get('json') === true) return true
  const raw = io.env.VERIFY_JSON
  if (raw === undefined) return false
  const yes = envBoolean(raw)
  return (
    yes ?? { option: 'VERIFY_JSON', message: `VERIFY_JSON: ${showValue(raw, 40)} is not a yes/no word (1/0, true/false, yes/no, on/off)` }
  )
}

/** The run's streams; a problem when VERIFY_JSON cannot be read. `cli`: the command line as verify read it, once. */
export function runStreams(io: StreamsIo, cli: CommandLine = commandLineLayer(io.rawArgs)): RunStreams | ConfigProblem {
  const json = jsonWanted(io, cli)
  if (typeof json !== 'boolean') return json
  const lines = json ? io.err : io.out
  const choice = colorChoice(cli.color, io.env)
  return {
    lines,
    err: io.err,
    json: json ? io.out : null,
    color: paints(choice, lines, io.env),
    live: io.err.isTTY === true && !underCi(io.env),
    width: lines.isTTY === true ? (lines.columns ?? 120) : Infinity,
  }
}
