// The meter read through a real Prometheus, as Prometheus means it (issue 21 rule 6): for every way
// Prometheus can hold an engine's meter that is not what a plain scrape shows, the verdict `pnpm
// verify --prometheus-url` must give. test/e2e/prometheus-faults.test.ts runs each row against Debian's
// Prometheus 2.42; docs/faults.md is generated from it (scripts/faults-doc.ts).
import type { EngineOptions } from '../../engine/launch.ts'
import type { KnobName } from '../../helpers/config/knobs.ts'
import type { RunVerdict, StepId, StepVerdict } from '../../helpers/steps/verdict.ts'

/** How the Prometheus of a row holds the engine. */
export type Through =
  /** Job `twins`: the engine and a second replica (armed, preloaded: its counter is above zero), both relabelled to instance="127.0.0.1". */
  | 'twins'
  /** Job `lossy`: the engine's /metrics through a relay that fails every scrape once traffic flows (up == 0), while the engine keeps serving. */
  | 'lossy'
  /** A Prometheus with `--query.lookback-delta=500ms` and a 2 s scrape interval: an instant query would miss a healthy series most of the time. */
  | 'short lookback'
  /** A Prometheus with a remote_read endpoint that refuses connections, asked for recent data too: every answer carries a warning, as a partial response does. */
  | 'partial response'

export interface PromFaultCase {
  fault: string
  what: string
  through: Through
  engine: Omit<EngineOptions, 'svc' | 'processName'>
  knob: KnobName
  value?: string
  /** --prometheus-match; default: the instance of --base-url. */
  match?: string
  verdict: RunVerdict
  /** Steps that must NOT pass (besides dropins, skipped on purpose with --no-dropin-check), with their verdict. */
  steps: Partial<Record<StepId, StepVerdict>>
  /** A piece of the meter step's observed or next text. */
  message: string
}

const ARMED = { args: ['--prefill-interleave', '1'] }

/** The budgets of every row: several scrapes per window (the short-lookback Prometheus scrapes every 2 s); the baseline waits for one before the probes. */
export const PROM_FAST = [
  '--health-budget',
  '8s',
  '--meter-window',
  '5s',
  '--probe-timeout',
  '3s',
  '--host-timeout',
  '10s',
  '--no-dropin-check',
]

export const PROMETHEUS_FAULTS: readonly PromFaultCase[] = [
  {
    fault: 'replicas relabelled to one instance',
    what: "two replicas whose instance is relabelled to the host name (one label set, one series, two scrape targets); verifying the one that ignores its knob beside one whose counter is above zero: never the other replica's counter",
    through: 'twins',
    engine: { ...ARMED, faults: ['knob_ignored'] },
    knob: 'PREFILL_INTERLEAVE',
    value: '1',
    match: '{job="twins",instance="127.0.0.1"}',
    verdict: 'inconclusive',
    steps: { meter: 'inconclusive' },
    message: 'takes the series of 2 targets',
  },
  {
    fault: 'scrapes lost after the traffic',
    what: 'up == 0 from the scrape that would show the probes\' traffic on, while the pid armproof read keeps serving: not observed, never red "went stale"',
    through: 'lossy',
    engine: ARMED,
    knob: 'PREFILL_INTERLEAVE',
    value: '1',
    match: '{job="lossy"}',
    verdict: 'inconclusive',
    steps: { meter: 'inconclusive' },
    message: 'failed (up == 0): not observed',
  },
  {
    fault: 'lookback shorter than the scrape interval',
    what: '--query.lookback-delta 500ms, scrapes every 2 s: staleness comes from the raw samples and up, so a healthy rising series is green, never "went stale"',
    through: 'short lookback',
    engine: ARMED,
    knob: 'PREFILL_INTERLEAVE',
    value: '1',
    verdict: 'green',
    steps: {},
    message: "rose during this run's traffic",
  },
  {
    fault: 'partial response lacking the meter',
    what: 'every answer carries a warning (a remote read Prometheus cannot reach) and lacks the meter: a partial answer proves no absence, inconclusive, never red "absent"',
    through: 'partial response',
    engine: { ...ARMED, faults: ['meter_absent'] },
    knob: 'PREFILL_INTERLEAVE',
    value: '1',
    verdict: 'inconclusive',
    steps: { meter: 'inconclusive' },
    message: 'answered with warnings',
  },
  {
    fault: 'partial response showing the rise',
    what: 'the same warnings, and the answer shows the counter rising during the run: what it shows is judged, green',
    through: 'partial response',
    engine: ARMED,
    knob: 'PREFILL_INTERLEAVE',
    value: '1',
    verdict: 'green',
    steps: {},
    message: "rose during this run's traffic",
  },
]
