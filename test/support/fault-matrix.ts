// The fault matrix: for every fault the reference engine can inject and every fault of the
// surroundings we can make here, the verdict, exit code and red steps `pnpm verify` must give.
// test/fault-matrix.test.ts runs it; docs/faults.md is generated from it (scripts/faults-doc.ts),
// and a test keeps the two equal.
import type { EngineOptions } from '../../engine/launch.ts'
import type { KnobName } from '../../helpers/config/knobs.ts'
import type { RunVerdict, StepId, StepVerdict } from '../../helpers/steps/verdict.ts'

export interface FaultCase {
  /** The fault, as the docs name it. */
  fault: string
  /** What is wrong, in an operator's words. */
  what: string
  engine: Omit<EngineOptions, 'svc' | 'processName'>
  knob: KnobName
  /** --value; omitted means the knob's default (a rollback). */
  value?: string
  /** Extra verify flags. */
  args?: string[]
  /** Extra env for verify (the API key travels here or in a file, never as a flag). */
  env?: Record<string, string>
  verdict: RunVerdict
  /** Steps that must NOT pass, with their verdict; every other step must pass (or be skipped on purpose). */
  steps: Partial<Record<StepId, StepVerdict>>
  /** A piece of the first non-passing step's observed or next text (of the meter step's, when every step passed); for an operator's mistake (verdict error), of what verify printed. */
  message: string
  /** The --base-url verify gets, made from the engine's (e.g. with /v1 appended); default the engine's own. */
  baseUrl?: (engineUrl: string) => string
  /** How the doc shows that base URL, e.g. `http://127.0.0.1:PORT/v1`. */
  baseUrlShown?: string
  /**
   * An operator's mistake, answered with exit 2 `before contact` (the configuration alone) or on
   * `first contact` (one GET /health, one GET /v1/models): run with the DEFAULT budgets (15m health,
   * 5m meter window), so an answer that waited for a budget would not come within the test's time.
   */
  mistake?: 'before contact' | 'first contact'
}

const ARMED = { args: ['--prefill-interleave', '1'] }
const arm = (faults: NonNullable<EngineOptions['faults']>): EngineOptions => ({ ...ARMED, faults })
/** All three probes red; with no request completed, the meter sees no traffic. */
const PROBES_FAILED = { 'probe.exact': 'failed', 'probe.tools': 'failed', 'probe.vision': 'failed', meter: 'inconclusive' } as const

/** Rows run as whole `pnpm verify` processes; every other row judges the same steps in-process. */
export const END_TO_END: readonly string[] = ['none (healthy arm)', 'knob_ignored', 'no_traffic_counters (rollback)', 'drop-in check skipped', 'none (api key in a file)', 'auth_echo (wrong key)']

/** Rows whose engine streams tens of MB: judged in-process one after another, in their own file (test/fault-matrix-heavy.test.ts). */
export const HEAVY: readonly string[] = ['metrics_huge', 'ledger_huge (default: the tail)', 'ledger_huge (whole log)']

export const FAULT_MATRIX: readonly FaultCase[] = [
  { fault: 'none (healthy arm)', what: 'PREFILL_INTERLEAVE armed to 1 on a healthy engine', engine: ARMED, knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'green', steps: {}, message: '' },
  { fault: 'knob_ignored', what: 'the engine ignores the knob: its meter stays flat while traffic flows', engine: arm(['knob_ignored']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { meter: 'failed' }, message: 'stayed at 0 for' },
  { fault: 'meter_absent', what: 'the build does not export the meter', engine: arm(['meter_absent']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { meter: 'failed' }, message: 'is absent from' },
  { fault: 'meter_wrong_prefix', what: 'the meter is exported under vllm: instead of radiance:', engine: arm(['meter_wrong_prefix']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { meter: 'failed' }, message: 'another prefix: vllm:engine_steps_held_total' },
  { fault: 'ledger_mismatch', what: 'the ledger resolved another value than argv carries', engine: arm(['ledger_mismatch']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { ledger: 'failed' }, message: 'resolved --prefill-interleave to 2, not 1' },
  { fault: 'help_missing_flag', what: "the pinned build's --help lacks the flag", engine: arm(['help_missing_flag']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { help: 'failed' }, message: 'does not define --prefill-interleave' },
  { fault: 'two engine processes', what: 'a second engine process runs beside the first', engine: { ...ARMED, copies: 2 }, knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { argv: 'failed' }, message: '2 processes named' },
  { fault: 'no engine process', what: 'no process of that name runs on the host', engine: ARMED, knob: 'PREFILL_INTERLEAVE', value: '1', args: ['--process', 'radiance-gone'], verdict: 'red', steps: { argv: 'failed' }, message: 'engine not running' },
  { fault: 'flag not passed', what: 'the service env still has the old value: argv lacks the flag', engine: {}, knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { argv: 'failed', ledger: 'failed', meter: 'failed' }, message: 'no --prefill-interleave in argv' },
  { fault: 'bench drop-in left', what: 'a drop-in overrides the unit', engine: { ...ARMED, dropins: ['/etc/systemd/system/demo.service.d/bench.conf'] }, knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { dropins: 'failed' }, message: 'DropInPaths=/etc/systemd/system/demo.service.d/bench.conf' },
  { fault: 'drop-in check skipped', what: '--no-dropin-check: the gate is shown as skipped, never passed', engine: ARMED, knob: 'PREFILL_INTERLEAVE', value: '1', args: ['--no-dropin-check'], verdict: 'green', steps: { dropins: 'skipped' }, message: 'not checked: --no-dropin-check' },
  { fault: 'health_no_fields', what: '/health is 200 without in_flight and queue_cap', engine: arm(['health_no_fields']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { health: 'failed' }, message: 'in_flight and queue_cap are not numeric' },
  { fault: 'health_503_forever', what: '/health stays 503 past the health budget', engine: arm(['health_503_forever']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'inconclusive', steps: { health: 'inconclusive', 'probe.exact': 'skipped', 'probe.tools': 'skipped', 'probe.vision': 'skipped', meter: 'inconclusive' }, message: '503 (loading)' },
  { fault: 'never_listen', what: 'connection refused for the whole health budget', engine: arm(['never_listen']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'inconclusive', steps: { health: 'inconclusive', 'probe.exact': 'skipped', 'probe.tools': 'skipped', 'probe.vision': 'skipped', meter: 'inconclusive' }, message: 'connection refused (loading)' },
  { fault: 'health_hang', what: '/health accepts the connection and never answers', engine: arm(['health_hang']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'inconclusive', steps: { health: 'inconclusive', 'probe.exact': 'skipped', 'probe.tools': 'skipped', 'probe.vision': 'skipped', meter: 'inconclusive' }, message: 'timeout' },
  { fault: 'exact_in_reasoning_only', what: 'content is null; the word is only in reasoning', engine: arm(['exact_in_reasoning_only']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { 'probe.exact': 'failed' }, message: 'appears only in reasoning' },
  { fault: 'think_in_content', what: 'a <think> block left in content (no reasoning parser): a real variant', engine: arm(['think_in_content']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'green', steps: {}, message: '' },
  { fault: 'reasoning field renamed', what: 'reasoning comes as `reasoning` (newer vLLM): a real variant', engine: { args: ['--prefill-interleave', '1', '--reasoning-field', 'reasoning'] }, knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'green', steps: {}, message: '' },
  { fault: 'tool_as_text', what: 'the tool call is written as text in content', engine: arm(['tool_as_text']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { 'probe.tools': 'failed' }, message: 'tool parser misconfigured' },
  { fault: 'tool_args_invalid', what: 'tool arguments are not JSON', engine: arm(['tool_args_invalid']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { 'probe.tools': 'failed' }, message: 'arguments are not JSON' },
  { fault: 'tool_args_object', what: 'tool arguments come as an object: a real variant', engine: arm(['tool_args_object']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'green', steps: {}, message: '' },
  { fault: 'no_tool_parser', what: 'the server runs without its tool parser (400 on tool_choice auto)', engine: arm(['no_tool_parser']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { 'probe.tools': 'failed' }, message: '--enable-auto-tool-choice' },
  { fault: 'vision_wrong_colour', what: 'the vision reply names the wrong colour', engine: arm(['vision_wrong_colour']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { 'probe.vision': 'failed' }, message: 'the reply says' },
  { fault: 'vision_blind', what: 'the model does not see the picture', engine: arm(['vision_blind']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { 'probe.vision': 'failed' }, message: 'the reply says' },
  { fault: 'vision_length', what: 'finish_reason length on the vision probe, content null', engine: arm(['vision_length']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { 'probe.vision': 'failed' }, message: 'thinking ate the budget' },
  { fault: 'completions_hang', what: 'chat completions are accepted and never answered', engine: arm(['completions_hang']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: PROBES_FAILED, message: 'no answer within 3.0s' },
  { fault: 'completions_truncated', what: 'the reply body is cut off mid-way', engine: arm(['completions_truncated']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: PROBES_FAILED, message: 'the reply broke off' },
  { fault: 'completions_empty', what: '200 with an empty body', engine: arm(['completions_empty']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: PROBES_FAILED, message: 'HTTP 200 with an empty body' },
  { fault: 'completions_non_json', what: '200 with an HTML body', engine: arm(['completions_non_json']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: PROBES_FAILED, message: 'the body is not JSON' },
  { fault: 'completions_error_flat', what: '500 with a flat error body', engine: arm(['completions_error_flat']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: PROBES_FAILED, message: 'HTTP 500: engine overloaded' },
  { fault: 'completions_error_nested', what: '500 with a nested error body', engine: arm(['completions_error_nested']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: PROBES_FAILED, message: 'HTTP 500: engine overloaded' },
  { fault: 'metrics_malformed', what: '/metrics has one malformed line away from the meter: Prometheus would drop the whole scrape, so monitoring cannot see the meter', engine: arm(['metrics_malformed']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { meter: 'failed' }, message: 'would refuse this /metrics page whole: line ' },
  { fault: 'metrics_nan', what: 'the meter reads NaN (not zero, not a number)', engine: arm(['metrics_nan']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { meter: 'failed' }, message: '= NaN' },
  { fault: 'metrics_negative', what: 'the counter reads below zero', engine: arm(['metrics_negative']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { meter: 'failed' }, message: '= -1.0' },
  { fault: 'metrics_redirect', what: '/metrics redirects to /metrics/ (old vLLM): followed, green', engine: arm(['metrics_redirect']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'green', steps: {}, message: '' },
  { fault: 'metrics_huge', what: '/metrics is about 30 MB: parsed with bounded memory, green', engine: arm(['metrics_huge']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'green', steps: {}, message: '' },
  { fault: 'no_traffic_counters (arm)', what: 'the engine counts no requests, but the meter moved: moved is proof', engine: arm(['no_traffic_counters']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'green', steps: {}, message: '' },
  { fault: 'no_traffic_counters (rollback)', what: 'a flat meter with no visible traffic proves nothing', engine: { faults: ['no_traffic_counters'] }, knob: 'PREFILL_INTERLEAVE', verdict: 'inconclusive', steps: { meter: 'inconclusive' }, message: 'no traffic reached the engine' },
  { fault: 'none (rollback)', what: 'PREFILL_INTERLEAVE back at its default: flag absent, meter stays 0 while traffic flows', engine: {}, knob: 'PREFILL_INTERLEAVE', verdict: 'green', steps: {}, message: '' },
  { fault: 'rollback not taken', what: 'asked for the default, but the engine still runs armed', engine: ARMED, knob: 'PREFILL_INTERLEAVE', verdict: 'red', steps: { argv: 'failed', ledger: 'failed', meter: 'failed' }, message: 'the serve script passes --prefill-interleave only when' },
  { fault: 'invented enum value', what: 'CHECKPOINT_POLICY=floor is not a choice of this build: red at help, and the meter is not watched (skipped, with why)', engine: {}, knob: 'CHECKPOINT_POLICY', value: 'floor', verdict: 'red', steps: { help: 'failed', argv: 'failed', ledger: 'failed', meter: 'skipped' }, message: 'floor is not a choice' },
  { fault: 'none (enum arm)', what: 'CHECKPOINT_POLICY armed to on_evict', engine: { args: ['--checkpoint-policy', 'on_evict'] }, knob: 'CHECKPOINT_POLICY', value: 'on_evict', verdict: 'green', steps: {}, message: '' },
  { fault: 'none (chunk arm)', what: 'BUSY_PREFILL_CHUNK armed to 512', engine: { args: ['--busy-prefill-chunk', '512'] }, knob: 'BUSY_PREFILL_CHUNK', value: '512', verdict: 'green', steps: {}, message: '' },
  { fault: 'none (meterless knob)', what: 'CHECKPOINT_SLOTS auto: no meter, the ledger line is the proof', engine: {}, knob: 'CHECKPOINT_SLOTS', value: 'auto', verdict: 'green', steps: { meter: 'skipped' }, message: 'no counter exists for --checkpoint-slots' },
  { fault: 'slots clamped by budget', what: 'CHECKPOINT_SLOTS=40 is clamped by the memory budget', engine: { args: ['--checkpoint-slots', '40'] }, knob: 'CHECKPOINT_SLOTS', value: '40', verdict: 'red', steps: { ledger: 'failed', meter: 'skipped' }, message: 'clamped to 21 by checkpoint_budget' },
  { fault: 'none (stats knob)', what: 'STAGER_DEPTH=4: no metric at all, proven by ledger and /stats', engine: { args: ['--stager-depth', '4'] }, knob: 'STAGER_DEPTH', value: '4', verdict: 'green', steps: {}, message: '' },
  { fault: 'api key missing', what: 'the endpoint wants a key and none was given: /v1/models answers 401 at first contact', engine: { args: ['--prefill-interleave', '1', '--api-key', 'sk-armproof-test-9f8e7d6c'] }, knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'error', steps: {}, mistake: 'first contact', message: 'set VERIFY_API_KEY (env or .env) or pass --api-key-file' },
  { fault: 'none (api key)', what: 'the endpoint wants a key and gets it', engine: { args: ['--prefill-interleave', '1', '--api-key', 'sk-armproof-test-9f8e7d6c'] }, knob: 'PREFILL_INTERLEAVE', value: '1', env: { VERIFY_API_KEY: 'sk-armproof-test-9f8e7d6c' }, verdict: 'green', steps: {}, message: '' },
  // issue 10: probes, ledger, secrets
  { fault: 'exact_sentence', what: 'the exact probe answers a sentence that contains the word ("I will not say kestrel.")', engine: arm(['exact_sentence']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { 'probe.exact': 'failed' }, message: 'answered with a sentence, not the word' },
  { fault: 'ledger_echo_only', what: "the log holds only the serve script's command-line echo, no resolved line: never the proof of a ledger-only knob", engine: { args: ['--checkpoint-slots', '16'], faults: ['ledger_echo_only'] }, knob: 'CHECKPOINT_SLOTS', value: '16', verdict: 'red', steps: { ledger: 'failed', meter: 'skipped' }, message: 'only lines that name the flag without resolving it' },
  { fault: 'ledger_huge (default: the tail)', what: "the log is longer than the 64 MiB host-output cap, an older boot first: the default command reads the tail, the latest boot's line is judged", engine: arm(['ledger_huge']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'green', steps: {}, message: '' },
  { fault: 'ledger_huge (whole log)', what: 'the same log read whole (--ledger-cmd "podman logs {svc}"): the output is cut at the cap, never judged from a partial log', engine: arm(['ledger_huge']), knob: 'PREFILL_INTERLEAVE', value: '1', args: ['--ledger-cmd', 'podman logs {svc}'], verdict: 'inconclusive', steps: { ledger: 'inconclusive' }, message: 'host-output cap and was cut' },
  { fault: 'none (api key in a file)', what: 'the endpoint wants a key and gets it from --api-key-file', engine: { args: ['--prefill-interleave', '1', '--api-key', 'sk-armproof-test-9f8e7d6c'] }, knob: 'PREFILL_INTERLEAVE', value: '1', args: ['--api-key-file', 'test/support/api-key.txt'], verdict: 'green', steps: {}, message: '' },
  { fault: 'auth_echo (wrong key)', what: 'a wrong key, and 401 bodies that quote the Authorization header back: the key is named at first contact, nothing of it shown', engine: { args: ['--prefill-interleave', '1', '--api-key', 'sk-armproof-test-9f8e7d6c'], faults: ['auth_echo'] }, knob: 'PREFILL_INTERLEAVE', value: '1', env: { VERIFY_API_KEY: 'sk-armproof-wrong-0000' }, verdict: 'error', steps: {}, mistake: 'first contact', message: 'the key given is refused' },
  // issue 10: meter
  { fault: 'meter_foreign_model', what: "another model's counter on the same page moves; the served model's own series stays 0", engine: arm(['meter_foreign_model']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { meter: 'failed' }, message: 'not judged: radiance:engine_steps_held_total{engine="1",model_name="radiance-other-70b"}' },
  { fault: 'meter_reset', what: 'the counter goes down between two scrapes of one run (a restart mid-proof)', engine: arm(['meter_reset']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { meter: 'failed' }, message: 'counter reset: radiance:engine_steps_held_total{engine="0",model_name="radiance-ref-8b"} read 1000 at scrape 1' },
  { fault: 'meter_inf', what: 'the counter reads +Inf', engine: arm(['meter_inf']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { meter: 'failed' }, message: '= +Inf' },
  { fault: 'meter_duplicate', what: 'the same series appears twice in one page', engine: arm(['meter_duplicate']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { meter: 'failed' }, message: 'the same series appears twice' },
  { fault: 'meter_not_counter', what: 'the meter is declared a gauge, not a counter', engine: arm(['meter_not_counter']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { meter: 'failed' }, message: 'not a counter' },
  { fault: 'meter_process_restarted', what: 'process_start_time_seconds moves between two scrapes of one run (a new process), while the counter rises', engine: arm(['meter_process_restarted']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { meter: 'failed' }, message: 'the engine restarted during the proof: process_start_time_seconds went from' },
  { fault: 'meter_preloaded (arm)', what: 'the counter was above zero before this run and rises with its traffic: green, the rise is the proof', engine: arm(['meter_preloaded']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'green', steps: {}, message: "rose during this run's traffic" },
  { fault: 'meter_preloaded + knob_ignored', what: "above zero at the first scrape and flat since, in the very process argv read: green, 'moved before this run'", engine: arm(['meter_preloaded', 'knob_ignored']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'green', steps: {}, message: 'it moved before this run' },
  // issue 13: the operator's mistakes, answered at once (default budgets), and other engines' real shapes
  { fault: '/v1 base URL', what: 'the base URL ends in /v1, as OpenAI clients take it: refused before contact, the root named', engine: ARMED, knob: 'PREFILL_INTERLEAVE', value: '1', baseUrl: (u) => `${u}/v1`, baseUrlShown: 'http://127.0.0.1:PORT/v1', verdict: 'error', steps: {}, mistake: 'before contact', message: 'ends in /v1; armproof adds /v1 itself' },
  { fault: 'no scheme', what: 'the base URL lacks http://', engine: ARMED, knob: 'PREFILL_INTERLEAVE', value: '1', baseUrl: (u) => u.replace(/^http:\/\//, ''), baseUrlShown: '127.0.0.1:PORT', verdict: 'error', steps: {}, mistake: 'before contact', message: 'has no scheme; write http://127.0.0.1:' },
  { fault: 'unresolvable host', what: 'the host name does not resolve (ENOTFOUND; the run resolves names under .invalid to NXDOMAIN itself, test/support/nxdomain.ts)', engine: ARMED, knob: 'PREFILL_INTERLEAVE', value: '1', baseUrl: (u) => u.replace('127.0.0.1', 'gpu-7.invalid'), baseUrlShown: 'http://gpu-7.invalid:PORT', env: { NODE_OPTIONS: '--import=./test/support/nxdomain.ts' }, verdict: 'error', steps: {}, mistake: 'first contact', message: 'does not resolve (ENOTFOUND)' },
  { fault: '404 on /health', what: 'the base URL carries a path: /health answers 404', engine: ARMED, knob: 'PREFILL_INTERLEAVE', value: '1', baseUrl: (u) => `${u}/api`, baseUrlShown: 'http://127.0.0.1:PORT/api', verdict: 'error', steps: {}, mistake: 'first contact', message: "/health answers HTTP 404 (the path): --base-url must be the engine's root" },
  { fault: 'health_redirect', what: '/health redirects to /health/: followed, as on /metrics, green', engine: arm(['health_redirect']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'green', steps: {}, message: '' },
  { fault: 'metrics_gzip', what: '/metrics sent gzip-encoded (armproof asks for it, as Prometheus does): decoded, green', engine: arm(['metrics_gzip']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'green', steps: {}, message: '' },
  { fault: 'completions_429', what: "a gateway's 429 with Retry-After on the first completions: retried within the probe timeout, green", engine: arm(['completions_429']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'green', steps: {}, message: '' },
  { fault: 'completions_429_forever', what: '429 with Retry-After past the probe timeout: red, said as overload, never a completion', engine: arm(['completions_429_forever']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: PROBES_FAILED, message: 'is overloaded and kept answering 429' },
  { fault: 'tools_need_jinja', what: 'llama.cpp without --jinja: HTTP 500 "tools param requires --jinja flag"', engine: arm(['tools_need_jinja']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { 'probe.tools': 'failed' }, message: 'restart llama-server with --jinja' },
  { fault: 'exact_abort', what: 'finish_reason abort: the engine cancelled the request', engine: arm(['exact_abort']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { 'probe.exact': 'failed' }, message: 'the engine aborted the request (finish_reason abort)' },
  { fault: 'exact_refusal', what: "the reply carries a refusal and content null: said as a refusal, not a parser fault", engine: arm(['exact_refusal']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { 'probe.exact': 'failed' }, message: 'the model refused' },
  { fault: 'meter_preloaded (rollback)', what: 'at the default, a counter above zero is not zero', engine: { faults: ['meter_preloaded'] }, knob: 'PREFILL_INTERLEAVE', verdict: 'red', steps: { meter: 'failed' }, message: 'read 500 → 500, not 0, although PREFILL_INTERLEAVE is at its default 0' },  // issue 20: pages and counters as Prometheus reads them
  { fault: 'metrics_exemplar_text', what: 'the meter carries an exemplar on a text/plain; version=0.0.4 page (exemplars are OpenMetrics only): Prometheus refuses the whole scrape, though the counter moved', engine: arm(['metrics_exemplar_text']), knob: 'PREFILL_INTERLEAVE', value: '1', verdict: 'red', steps: { meter: 'failed' }, message: 'an exemplar ("#" after the value) is OpenMetrics only' },
]

/** Faults of the surroundings, run through a real sshd in test/ssh.test.ts (whose test names these quote). */
export const SURROUNDINGS = [
  { fault: 'ssh refused', what: 'nothing listens on the ssh port', verdict: 'inconclusive', steps: 'dropins, help, argv, ledger inconclusive', message: 'Connection refused (names host and port)', test: 'connection refused: exit 3, the message names host and port' },
  { fault: 'unknown host key', what: 'BatchMode with an empty known_hosts', verdict: 'inconclusive', steps: 'host steps inconclusive', message: 'Host key verification failed', test: 'unknown host key with BatchMode: exit 3 fast, the message says host key' },
  { fault: 'sudo wants a password', what: 'the deploy user needs sudo and sudoers asks for a password', verdict: 'inconclusive', steps: 'help, ledger inconclusive', message: 'a password is required … NOPASSWD', test: 'sudo that wants a password (an unprivileged ssh user, --deploy-user root): no hang, inconclusive with the sudoers hint' },
  { fault: 'hostile --svc', what: 'a value that would run a command on the host', verdict: 'error', steps: 'none run', message: 'nothing was contacted', test: 'refused with exit 2 before any connection' },
] as const

/**
 * More of the operator's mistakes answered on first contact, against a plain loopback server
 * rather than the reference engine; run by test/first-contact.test.ts (whose test names these quote).
 */
export const FIRST_CONTACT_ELSEWHERE = [
  { fault: 'self-signed TLS', what: 'an https endpoint whose certificate this process does not trust', verify: '--base-url https://127.0.0.1:PORT', verdict: 'error', when: 'on first contact: the TLS handshake of GET /health', message: 'TLS verification of 127.0.0.1:PORT failed (DEPTH_ZERO_SELF_SIGNED_CERT); pass the CA that signed it with --ca-file PATH', test: 'a self-signed https endpoint: exit 2 naming TLS and --ca-file; with --ca-file the run goes on' },
  { fault: '401 on /health', what: 'a gateway guards /health', verify: '--base-url http://127.0.0.1:PORT', verdict: 'error', when: 'on first contact: GET /health', message: '/health answers HTTP 401 (the key)', test: '401 on /health: exit 2 naming the key, at once' },
  { fault: '403 on /v1/models', what: 'the key given is refused', verify: 'VERIFY_API_KEY=… --base-url http://127.0.0.1:PORT', verdict: 'error', when: 'on first contact: GET /v1/models', message: '/v1/models answers HTTP 403 (the key): the key given is refused', test: '403 on /v1/models with a key: exit 2, the key named, never shown' },
] as const
