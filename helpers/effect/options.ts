// The options of `pnpm effect` as data (flag, env twin, meaning, default), read by the one
// command-line parser (helpers/config/command-line.ts). A flag beats env, env beats .env. Every problem is
// collected; none is thrown.
import type { OptionSpec } from '../config/options.ts'

export const EFFECT_OPTIONS = [
  {
    flag: 'report',
    env: 'EFFECT_REPORT',
    kind: 'string',
    meaning: 'the green verify report of the arm (its svc, knob, values, endpoint, and when the proof started)',
    default: 'none: then --svc, --knob and --armed-at',
  },
  {
    flag: 'svc',
    env: 'EFFECT_SVC',
    kind: 'string',
    meaning: 'the service, when no report is given; [A-Za-z0-9_.-]+ only',
    default: "the report's",
  },
  {
    flag: 'knob',
    env: 'EFFECT_KNOB',
    kind: 'string',
    meaning: 'the knob armed (its meter is judged per engine step), when no report is given',
    default: "the report's",
  },
  {
    flag: 'engine',
    env: 'EFFECT_ENGINE',
    kind: 'string',
    meaning:
      "engine profile, as verify's: radiance, vllm, sglang, llama.cpp, or the path of a profile file (YAML); its metrics: names the latency and cadence series judged, and its catalog the knob",
    default: "the report's, else radiance",
  },
  {
    flag: 'value',
    env: 'EFFECT_VALUE',
    kind: 'string',
    meaning: 'the value armed, for the result and the vault line',
    default: "the report's, else the knob's default",
  },
  {
    flag: 'previous',
    env: 'EFFECT_PREVIOUS',
    kind: 'string',
    meaning: 'the value before the arm',
    default: "the report's, else the knob's default",
  },
  {
    flag: 'armed-at',
    env: 'EFFECT_ARMED_AT',
    kind: 'string',
    meaning: "when the arm took effect, an RFC 3339 time (2026-03-03T09:00:00Z); beats the report's",
    default: "the engine's restart just before the report's start, else that start",
  },
  {
    flag: 'base-url',
    env: 'EFFECT_BASE_URL',
    kind: 'string',
    meaning: 'the endpoint root (its host:port is the default --prometheus-match)',
    default: "the report's",
  },
  {
    flag: 'prometheus-url',
    env: 'EFFECT_PROMETHEUS_URL',
    kind: 'string',
    meaning: 'the Prometheus that holds the traffic (its HTTP API; no credentials in the URL)',
    default: "the one the report's meter was read through, else required",
  },
  {
    flag: 'prometheus-match',
    env: 'EFFECT_PROMETHEUS_MATCH',
    kind: 'string',
    meaning: 'the engine\'s series in Prometheus (label matchers only), e.g. {job="radiance",instance="gpu-7:8000"}',
    default: '{instance="<host:port of the endpoint>"}',
  },
  { flag: 'before', env: 'EFFECT_BEFORE', kind: 'string', meaning: 'the window before the arm (ends at the arm)', default: '24h' },
  {
    flag: 'after',
    env: 'EFFECT_AFTER',
    kind: 'string',
    meaning: 'the window after the arm (starts at the arm; it must be over)',
    default: '6h',
  },
  {
    flag: 'baseline',
    env: 'EFFECT_BASELINE',
    kind: 'string',
    meaning:
      'what the after window is judged against: like-hours (the same hours a week before when Prometheus holds them, else a day before), yesterday, last-week, or before (the whole before window)',
    default: 'like-hours',
  },
  {
    flag: 'metrics',
    env: 'EFFECT_METRICS',
    kind: 'string',
    meaning:
      "the metrics judged, comma-separated ids (ttft, itl, e2e, requests, tokens, preemptions, token-time, prompt-time, decode-step, mixed-step, meter: those the engine's profile names series for); one named is judged even when the engine does not export it",
    default: "all the engine's",
  },
  {
    flag: 'threshold',
    env: 'EFFECT_THRESHOLD',
    kind: 'string',
    meaning:
      'practical thresholds per metric, e.g. ttft=15%,itl=5%: no change is a confidence interval wholly within ±this; worse or better a significant shift past it',
    default: 'latency 10%, throughput 20%, preemptions 25%, cadence 10%',
  },
  {
    flag: 'min-count',
    env: 'EFFECT_MIN_COUNT',
    kind: 'string',
    meaning: 'fewer observations (requests, steps) than this in a window is too little traffic: inconclusive',
    default: '100',
  },
  {
    flag: 'out',
    env: 'EFFECT_OUT',
    kind: 'string',
    meaning: 'JSON result path; a picture (SVG) of each compared distribution is written beside it',
    default: 'none',
  },
  {
    flag: 'json',
    env: 'EFFECT_JSON',
    kind: 'boolean',
    meaning: 'write the JSON result to stdout, alone; every other line then goes to stderr; env: EFFECT_JSON=1',
    default: 'off',
  },
  {
    flag: 'summary',
    env: 'EFFECT_SUMMARY',
    kind: 'string',
    meaning: 'Markdown summary path (links the pictures; also appended to GITHUB_STEP_SUMMARY when that is set)',
    default: 'none',
  },
  {
    flag: 'vault',
    env: 'EFFECT_VAULT',
    kind: 'string',
    meaning:
      "write the judged effect under the arm's entry on the endpoint's vault page (needs --report; the page must hold the arm's green entry)",
    default: 'none',
  },
  {
    flag: 'page',
    env: 'EFFECT_PAGE',
    kind: 'string',
    meaning: "with --vault: the endpoint's page, relative to the vault; skips discovery",
    default: 'front matter service: <svc>, else <svc>.md',
  },
  {
    flag: 'ca-file',
    env: 'EFFECT_CA_FILE',
    kind: 'string',
    meaning: 'extra CA certificates (PEM) for an https Prometheus',
    default: 'none',
  },
  {
    flag: 'mode',
    env: 'EFFECT_MODE',
    kind: 'string',
    meaning: 'live, record (every Prometheus exchange kept in --fixtures) or replay (judged again from them, offline)',
    default: 'live',
  },
  {
    flag: 'fixtures',
    env: 'EFFECT_FIXTURES',
    kind: 'string',
    meaning: 'fixture folder of record and replay',
    default: 'fixtures/<svc>/<knob>/effect',
  },
] as const satisfies readonly OptionSpec[]

export type EffectFlag = (typeof EFFECT_OPTIONS)[number]['flag']

export const EFFECT_METAVARS: Readonly<Record<string, string>> = {
  report: 'path',
  svc: 'svc',
  knob: 'knob',
  engine: 'radiance|vllm|sglang|llama.cpp|file',
  value: 'value',
  previous: 'value',
  'armed-at': 'time',
  'base-url': 'url',
  'prometheus-url': 'url',
  'prometheus-match': '{label="value",…}',
  before: 'duration',
  after: 'duration',
  baseline: 'like-hours|yesterday|last-week|before',
  metrics: 'id,…',
  threshold: 'id=N%,…',
  'min-count': 'n',
  out: 'path',
  summary: 'path',
  vault: 'dir',
  page: 'path',
  'ca-file': 'path',
  mode: 'live|record|replay',
  fixtures: 'dir',
}
