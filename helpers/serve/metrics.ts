// `GET /metrics` of `armproof serve`: its own counters as a Prometheus text page (format 0.0.4).
// Every series of a counter is written from the start, at zero, so a rate() or an alert on
// `armproof_serve_runs_total{verdict="red"}` has a series before the first red run.
import pkg from '../../package.json' with { type: 'json' }

/** What a run ends as: a report's verdict, or `failed` when serve could not get one (no report). */
export const RUN_OUTCOMES = ['green', 'red', 'inconclusive', 'error', 'interrupted', 'failed'] as const
export type RunOutcome = (typeof RUN_OUTCOMES)[number]

/** Why a request was answered without a run. */
export const REFUSALS = ['unauthorized', 'busy', 'queue_full', 'unknown_target', 'bad_request'] as const
export type Refusal = (typeof REFUSALS)[number]

export class ServeMetrics {
  private readonly runs = new Map<RunOutcome, number>(RUN_OUTCOMES.map((o) => [o, 0]))
  private readonly refused = new Map<Refusal, number>(REFUSALS.map((r) => [r, 0]))
  private readonly seconds = new Map<RunOutcome, number>(RUN_OUTCOMES.map((o) => [o, 0]))
  private readonly startedAt = Date.now() / 1000

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
    family('armproof_serve_runs_running', 'gauge', 'Runs under way now.', [['', now.running]])
    family('armproof_serve_runs_queued', 'gauge', 'Runs waiting for a slot now.', [['', now.queued]])
    family('armproof_serve_targets', 'gauge', 'Targets in the targets file at its last good read.', [['', now.targets]])
    family('armproof_serve_start_time_seconds', 'gauge', 'When this serve process started (Unix time).', [['', Math.round(this.startedAt)]])
    family('armproof_serve_info', 'gauge', 'The version of armproof serving.', [[`{version="${pkg.version}"}`, 1]])
    return `${lines.join('\n')}\n`
  }
}
