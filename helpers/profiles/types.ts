// An engine profile and its knobs as the steps read them, converted from the profile's data (a
// YAML file: ./doc.ts is its schema, ./convert.ts turns it into these). Types only: every module
// of armproof may import them without an import cycle.

/** How a knob's value is written and checked. Enum choices are never listed here: they come from the build's `--help`. */
export type KnobType =
  | { kind: 'int'; min: number; unit?: string }
  | { kind: 'enum' }
  | { kind: 'int-or-auto'; min: number }
  /** `true` / `false`: a switch (`--x`, and `--no-x` where the parser has the negation). */
  | { kind: 'bool' }

/** What proves the engine acted on the knob, besides argv and the ledger. */
export interface KnobProof {
  /** Exact sample name of the counter whose served series must rise (or be above zero in the process argv read) when armed, and stay at zero where the value turns the feature off. */
  meter?: { name: string; labels?: Readonly<Record<string, string>> }
  /** Sample names reported beside the meter as evidence only; they never gate. */
  evidence?: readonly string[]
  /** Dotted path of a `/stats` JSON field that must equal the expected value (knobs without a meter). */
  stats?: string
  /** Where the engine prints or serves the value it resolved: a source id of the profile (`resolved:`) → the knob's key there. */
  sources?: Readonly<Record<string, string>>
  /** The traffic the meter moves only under, sent by the meter step itself (bounded): `shared-prefix`, two requests sharing a prompt prefix longer than one KV block. */
  traffic?: 'shared-prefix'
  /**
   * The engine prints and serves no resolved value for the flag (llama.cpp's --cache-prompt): why, in
   * the catalog's words. Its ledger step is skipped with that reason; argv and its meter are the proof.
   */
  noResolvedLine?: string
}

export interface KnobSpec {
  env: string
  flag: `--${string}`
  /** Other spellings of the flag (`-np` for `--parallel`). */
  aliases?: readonly string[]
  /** The engine's environment variable that sets the flag when the command line does not (llama.cpp's `LLAMA_ARG_N_PARALLEL`). */
  envTwin?: string
  type: KnobType
  /** The default as the engine resolves it; `null` means "read it from the build's --help". */
  default: string | null
  /** The serve script passes the flag only when the value differs from the default ("unset means default"). */
  passedOnlyWhenNonDefault: boolean
  /** The values that turn the knob's feature off: there its meter stays at zero while traffic flows. Undefined: the default does. */
  off?: readonly string[]
  /** What a value written on the command line or printed by the engine means (`-1` → `auto`). */
  readAs?: Readonly<Record<string, string>>
  /** Values the engine may resolve to when another was asked (`auto` → `any-number`, `fp8` → `auto`): said, and not red. */
  allow?: Readonly<Record<string, readonly string[]>>
  proof: KnobProof
  summary: string
}

/** How an engine's parser reads its command line (helpers/argparse/rules.ts applies them). */
export interface ParserProfile {
  underscoreIsDash: boolean
  abbreviations: boolean
  lastWins: boolean
  configFlag: string | null
  /** The prefix that turns a switch off (`--no-` of argparse's BooleanOptionalAction); null: none. */
  negation: string | null
  /** Flags may come from env twins (read first; the command line wins). */
  envTwins: boolean
}

/** Where an engine prints or serves what it resolved. */
export type SourceShape =
  /** radiance's ledger: `--flag VALUE [auto] … bound by X`, one line per flag. */
  | 'flag-line'
  /** A Python dict repr after a marker: vLLM's `non-default args: {…}`. */
  | 'python-dict'
  /** A Python object repr after a marker: SGLang's `server_args=ServerArgs(…)`. */
  | 'python-call'
  /** `key=value, key=value` with Python reprs as values: vLLM's engine config line. */
  | 'key-values'
  /** `name = value` assignments in a line: llama.cpp's startup lines. */
  | 'assignments'
  /** The labels of an info gauge on /metrics: `vllm:cache_config_info{…} 1`. */
  | 'info-metric'
  /** A JSON endpoint: SGLang's `/server_info`, llama.cpp's `/props`. */
  | 'json'

export interface SourceSpec {
  id: string
  /** How the report names it: "non-default args", "the engine config line", "/props". */
  label: string
  /** What it shows: what the argument parser resolved, or what the engine runs. */
  says: 'parser' | 'engine'
  shape: SourceShape
  /** A log source: the message (after the log prefix) starts with this (a regex). */
  marker?: string
  /** A python-call source: the class name (`ServerArgs`). */
  call?: string
  /** A source of non-defaults only: a key left out is the parser's default. */
  omitsDefaults?: boolean
  /** Every value it gives was chosen by the engine (llama.cpp's `n_parallel is set to auto, …`). */
  auto?: boolean
  /** info-metric: the family. */
  metric?: string
  /** json: the paths to ask, in order (a later one is an older build's name, asked when an earlier is 404). */
  paths?: readonly string[]
  /** An endpoint the engine serves only when so configured (vLLM's /server_info under VLLM_SERVER_DEV_MODE=1): not served is not a failure. */
  optional?: boolean
  /**
   * The line is printed only at a higher log verbosity than the engine's default (llama.cpp's
   * `-lv 4` trace lines): how to get it. Its absence from a boot is then no red.
   */
  printedAt?: string
  /** No real engine's output backs this source yet: why, said beside what it reads. */
  unverified?: string
}

/** What `/health` must answer, besides 200. */
export interface HealthProfile {
  /** JSON fields that must be numbers (radiance: in_flight, queue_cap). */
  numeric: readonly string[]
  /** JSON fields that must equal these texts (llama.cpp: status ok). */
  equal: Readonly<Record<string, string>>
  /**
   * What a 200's body must be, besides `numeric` and `equal`: `empty` (vLLM's and SGLang's
   * /health: no body at all); `any` (unsaid in the profile). An HTML page is never an engine's
   * health answer, whatever the profile: a gateway or web server answers there.
   */
  body: 'empty' | 'any'
}

/** A metric's earlier names, newest first. */
export interface Renamed {
  name: string
  /** The first version that no longer uses it, as the engine numbers them. */
  before?: string
  unit?: string
}

/** The latency and cadence series `armproof effect` reads, as the engine serves them. */
export interface EffectNames {
  /** Histogram families (without `_bucket`): time to first token, inter-token latency, end-to-end latency. */
  ttft?: string
  itl?: string
  e2e?: string
  /** Label matchers (PromQL, inside braces) that keep the requests counter to the requests that finished (`finished_reason!="abort"`). */
  requestsMatch?: string
  /** A counter of preemptions (vLLM's) or retractions (SGLang's), judged per request. */
  preemptions?: string
  /** Counters of seconds spent on prompt tokens and on generated tokens (llama.cpp: no histograms), judged per token. */
  promptSeconds?: string
  generationSeconds?: string
}

export interface MetricsProfile {
  /** The label naming the served model (`model_name`); null: the engine labels nothing (llama.cpp). */
  modelLabel: string | null
  /** The request and token counters that say whether traffic reached the engine. */
  requests?: string
  promptTokens?: string
  generationTokens?: string
  /** Step-time counters (evidence only): radiance's. */
  stepTime?: { steps: string; stepsDecode: string; seconds: string; secondsDecode: string }
  /** What `armproof effect` judges besides the request and token counters above; absent: not exported. */
  effect: EffectNames
  /** The prefixes the evidence line expects to see on /metrics. */
  prefixes: readonly string[]
  /** A metric's name → its earlier versions' names. */
  renamed: Readonly<Record<string, readonly Renamed[]>>
}

/** What an operator sets on this engine for the probes' features, in its own flags (the probes' next steps say these). */
export interface ProbeWords {
  /** How the server is made to return tool calls (vLLM: --enable-auto-tool-choice --tool-call-parser …). */
  toolSetup: string
  /** What parses a call the model emits (vLLM: --tool-call-parser; llama.cpp: the chat template). */
  toolParser: string
  /** How the server is made to take images (vLLM: --limit-mm-per-prompt; llama.cpp: --mmproj). */
  visionSetup: string
}

/** An engine profile without its knobs: how to read that engine. */
export interface Engine {
  name: string
  summary: string
  /**
   * The real build whose captured output this profile was checked against (a corpus under
   * fixtures/real/); null: none, and every verdict that uses the profile says so.
   */
  verifiedAgainst: string | null
  /** The default `--process`. */
  process: string
  help: {
    /** The command inside the engine's container that prints the build's flags (after the runtime's exec). */
    command: string
    /** How to print one flag's help, by hand (`{flag}`: the flag without dashes). */
    flag?: string
    layout: 'argparse' | 'llama'
    /** A default printed `None` is no default (Python: decided later). */
    noneIsUnset: boolean
  }
  parser: ParserProfile
  log: {
    /** The engine's own line prefix, a regex anchored at the line's start; null: radiance's generic grammar. */
    prefix: string | null
    /** What the message of a boot's first line starts with (a regex): only the latest boot's lines are read. Null: every line is (each source's latest line is the latest boot's). */
    boot: string | null
  }
  resolved: readonly SourceSpec[]
  health: HealthProfile
  metrics: MetricsProfile
  probes: ProbeWords
}

/** A whole profile: the engine and its built-in knob catalog. */
export interface Profile {
  engine: Engine
  knobs: Readonly<Record<string, KnobSpec>>
}
