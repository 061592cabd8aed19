// `effect --help`. Its own module, with only what the text needs, so that the installed command
// answers `armproof effect --help` without loading the judge and its HTTP client (bin/armproof.ts).
import { COMMON_SWITCHES, optionRows } from '../config/options.ts'
import { command } from '../config/invocation.ts'
import { EFFECT_METAVARS, EFFECT_OPTIONS } from './options.ts'
import { EFFECT_EXIT } from './result.ts'

export function effectHelp(): string {
  const self = command('effect')
  return [
    'armproof effect: judge, later and from the real traffic in Prometheus, what an arm did to latency, throughput and cadence.',
    '',
    `Usage: ${self} --report <verify report> [options]`,
    `       ${self} --svc <svc> --knob <knob> --armed-at <RFC 3339 time> --prometheus-url <url> [options]`,
    '',
    'Options (each has an env twin; .env is read; a flag beats env):',
    ...optionRows(EFFECT_OPTIONS, 34, (f) => EFFECT_METAVARS[f] ?? 'value'),
    ...COMMON_SWITCHES,
    '',
    'Per metric: better, worse, no change, changed (cadence or throughput, which have no worse direction: never a failure), inconclusive (an interval that straddles the threshold, too little traffic, a gap, bucket edges that differ, a series in one window only) or not exported (absent from both windows: left out of the verdict, unless --metrics names it or it is ttft or itl).',
    "Each hour after the arm is paired with the same hour of the baseline day; a paired t test over the hours gives the shift and its 90% interval. Worse or better: p < 0.01 and the shift past the metric's threshold. No change: the whole interval within ±threshold. Each metric says the smallest shift the run could have detected.",
    '',
    `Exit codes: ${EFFECT_EXIT.ok} no metric worse · ${EFFECT_EXIT.worse} a metric worse · ${EFFECT_EXIT.config} configuration (nothing contacted), or Prometheus refused on first contact · ${EFFECT_EXIT.inconclusive} inconclusive · ${EFFECT_EXIT.unwritten} the verdict was printed but an output (--out, a picture, --summary, --vault, the fixtures) was not written`,
  ].join('\n')
}
