// `GET /metrics` of `armproof serve`: its own counters as a Prometheus text page (format 0.0.4).
// Every series of a counter is written from the start, at zero, so a rate() or an alert on
// `armproof_serve_runs_total{verdict="red"}` has a series before the first red run.
import pkg from '../../package.json' with { type: 'json' }

/** What a run ends as: a report's verdict, or `failed` when serve could not get one (no report). */
export const RUN_OUTCOMES = ['green', 'red', 'inconclusive', 'error', 'interrupted', 'failed'] as const
export type RunOutcome = (typeof RUN_OUTCOMES)[number]

/** Why a request was answered without a run. */
export const REFUSALS = [
  'unauthorized',
  'busy',
  'queue_full',
  'queue_wait',
  'shutdown',
  'unknown_target',
  'target_problem',
  'targets_file',
  'bad_request',
] as const
export type Refusal = (typeof REFUSALS)[number]

/** Serve's own failures (not a run's verdict): a handler that threw, a run that could not be started, a token file gone bad. */
export const FAILURES = ['handler', 'run_start', 'token_file'] as const
export type Failure = (typeof FAILURES)[number]

/** Connections closed before a request was read: past the per-client share, past the total. */
export const DROPS = ['per_client', 'total'] as const
export type Drop = (typeof DROPS)[number]

/** This many of serve's own failures in a row, with no run started between, make /healthz answer 503. */
export const FAILING_AFTER = 3

export class ServeMetrics {
  private readonly runs = new Map<RunOutcome, number>(RUN_OUTCOMES.map((o) => [o, 0]))
  private readonly refused = new Map<Refusal, number>(REFUSALS.map((r) => [r, 0]))
  private readonly seconds = new Map<RunOutcome, number>(RUN_OUTCOMES.map((o) => [o, 0]))
  private readonly failures = new Map<Failure, number>(FAILURES.map((f) => [f, 0]))
  private readonly drops = new Map<Drop, number>(DROPS.map((d) => [d, 0]))
  private readonly startedAt = Date.now() / 1000
  private inARow = 0
  private lastFailure: Failure | null = null

  /** Serve itself failed: counted, and after FAILING_AFTER in a row /healthz says so. */
  failed(kind: Failure): void {
    this.failures.set(kind, this.failures.get(kind)! + 1)
    this.inARow++
    this.lastFailure = kind
  }

  /** A run started: serve works again. */
  started(): void {
    this.inARow = 0
  }

  dropped(why: Drop): void {
    this.drops.set(why, this.drops.get(why)! + 1)
  }

  /** Why /healthz should say serve is failing, or null. */
  failing(): string | null {
    return this.inARow >= FAILING_AFTER
      ? `${this.inARow} failures of serve itself in a row (the last: ${this.lastFailure}), no run started since`
      : null
  }

  ran(outcome: RunOutcome, ms: number): void {
    this.runs.set(outcome, this.runs.get(outcome)! + 1)
    this.seconds.set(outcome, this.seconds.get(outcome)! + ms / 1000)
  }

  refuse(why: Refusal): void {
    this.refused.set(why, this.refused.get(why)! + 1)
  }

  page(now: { running: number; queued: number; targets: number }): string {
    const lines: string[] = []
    const family = (name: string, type: string, help: string, samples: Array<[string, number]>): void => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`)
      for (const [labels, value] of samples) lines.push(`${name}${labels} ${Number.isInteger(value) ? value : value.toFixed(3)}`)
    }
    family(
      'armproof_serve_runs_total',
      'counter',
      'Runs finished, by the verdict of their report (failed: no report).',
      RUN_OUTCOMES.map((o) => [`{verdict="${o}"}`, this.runs.get(o)!]),
    )
    family(
      'armproof_serve_run_seconds_total',
      'counter',
      'Time spent in finished runs, by verdict.',
      RUN_OUTCOMES.map((o) => [`{verdict="${o}"}`, this.seconds.get(o)!]),
    )
    family(
      'armproof_serve_refused_total',
      'counter',
      'Run requests answered without a run, by reason.',
      REFUSALS.map((r) => [`{reason="${r}"}`, this.refused.get(r)!]),
    )
    family(
      'armproof_serve_failures_total',
      'counter',
      "Serve's own failures, by kind (handler: a request serve could not answer as it should; run_start: a run that could not be started).",
      FAILURES.map((f) => [`{kind="${f}"}`, this.failures.get(f)!]),
    )
    family(
      'armproof_serve_connections_dropped_total',
      'counter',
      'Connections closed before a request was read, by reason (past --max-connections-per-client, past --max-connections).',
      DROPS.map((d) => [`{reason="${d}"}`, this.drops.get(d)!]),
    )
    family('armproof_serve_up', 'gauge', '1 while serve works, 0 once /healthz says it is failing.', [['', this.failing() ? 0 : 1]])
    family('armproof_serve_runs_running', 'gauge', 'Runs under way now.', [['', now.running]])
    family('armproof_serve_runs_queued', 'gauge', 'Runs waiting for a slot now.', [['', now.queued]])
    family('armproof_serve_targets', 'gauge', 'Targets in the targets file at its last read (with a problem or not).', [['', now.targets]])
    family('armproof_serve_start_time_seconds', 'gauge', 'When this serve process started (Unix time).', [['', Math.round(this.startedAt)]])
    family('armproof_serve_info', 'gauge', 'The version of armproof serving.', [[`{version="${pkg.version}"}`, 1]])
    return `${lines.join('\n')}\n`
  }
}
