// The data of an engine profile and of a knob catalog, as written (YAML read with the failsafe
// schema: every scalar is the text written, so `default: 0` is "0" and a switch is `true` /
// `false`), and the schema that checks it with helpers/schema/schema.ts. Keys are kebab-case, as the
// contract's catalog keys are (`passed-only-when-non-default`). A recording and a report carry
// the profile (without its knobs) and the knob's entry in this shape, checked by the same schemas.
import { LABEL_NAME, METRIC_NAME } from '../prom/query.ts'
import { array, literal, object, optional, record, string, type Infer } from '../schema/schema.ts'

const text = (says: string, re: RegExp) => string({ re, says })
const SWITCH = literal('true', 'false')
const NAME = text('a name of letters, digits, ".", "_" or "-"', /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/)
const ONE_LINE = text('one line of text', /^[^\n\r\0]{1,400}$/)
const COMMAND = text('a command of one line', /^[^\n\r\0]{1,400}$/)
const METRIC = text('a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)', METRIC_NAME)
const MATCHERS = text(
  'label matchers, e.g. finished_reason!="abort"',
  /^[a-zA-Z_][a-zA-Z0-9_]*(=|!=|=~|!~)"[^"\\\n\r\0]*"(,[a-zA-Z_][a-zA-Z0-9_]*(=|!=|=~|!~)"[^"\\\n\r\0]*"){0,7}$/,
)
const LABEL = text('a label name ([a-zA-Z_][a-zA-Z0-9_]*)', LABEL_NAME)
const FLAG = text('a long flag, e.g. --max-num-seqs', /^--[A-Za-z0-9][A-Za-z0-9_-]*$/)
const ANY_FLAG = text('a flag, e.g. -np or --parallel', /^--?[A-Za-z0-9][A-Za-z0-9_-]*$/)
const ENV_NAME = text('an environment variable name ([A-Za-z_][A-Za-z0-9_]*)', /^[A-Za-z_][A-Za-z0-9_]*$/)
const VALUE = text('a value of letters, digits, "_", ".", "-" or "+"', /^[A-Za-z0-9_.+-]{1,64}$/)
const INT = text('a whole number', /^-?\d{1,9}$/)
const KEY = text('a key or dotted path', /^[A-Za-z0-9_.:-]{1,200}$/)
const REGEX = text('a regular expression of one line', /^[^\n\r\0]{1,400}$/)
export const KNOB_NAME_RE = /^[A-Z][A-Z0-9_]{0,63}$/
const SOURCE_ID_RE = /^[a-z][a-z0-9-]{0,63}$/

/** One knob's catalog entry (the contract's keys, and a few more the profiles need). */
export const KNOB_DOC = object(
  {
    env: ENV_NAME,
    flag: FLAG,
    aliases: optional(array(ANY_FLAG, { max: 8 })),
    'env-twin': optional(ENV_NAME),
    type: literal('int', 'bool', 'enum', 'int-or-auto'),
    min: optional(INT),
    unit: optional(NAME),
    default: optional(VALUE),
    'passed-only-when-non-default': optional(SWITCH),
    off: optional(array(VALUE, { max: 16 })),
    'read-as': optional(record(VALUE, { re: /^[A-Za-z0-9_.+-]{1,64}$/, says: 'a value' })),
    allow: optional(record(array(VALUE, { max: 16 }), { re: /^[A-Za-z0-9_.+-]{1,64}$/, says: 'a value' })),
    meter: optional(
      object({ name: METRIC, labels: optional(record(string(), { re: LABEL_NAME, says: 'a label name' })) }, { closed: true }),
    ),
    evidence: optional(array(METRIC, { max: 16 })),
    stats: optional(KEY),
    sources: optional(record(KEY, { re: SOURCE_ID_RE, says: 'a source id of the profile (its resolved: list)' })),
    traffic: optional(literal('shared-prefix')),
    'no-resolved-line': optional(ONE_LINE),
    summary: optional(ONE_LINE),
  },
  { closed: true },
)
export type KnobDoc = Infer<typeof KNOB_DOC>

const KNOBS = record(KNOB_DOC, { re: KNOB_NAME_RE, says: 'a knob name in capitals, e.g. MAX_NUM_SEQS' })

const SOURCE_DOC = object(
  {
    id: text('a source id of lower-case letters, digits and "-"', SOURCE_ID_RE),
    label: ONE_LINE,
    says: literal('parser', 'engine'),
    shape: literal('flag-line', 'python-dict', 'python-call', 'key-values', 'assignments', 'info-metric', 'json'),
    marker: optional(REGEX),
    call: optional(NAME),
    'omits-defaults': optional(SWITCH),
    auto: optional(SWITCH),
    metric: optional(METRIC),
    paths: optional(array(text('a path starting with /', /^\/[^\s\0]{0,200}$/), { max: 4 })),
    optional: optional(SWITCH),
    'printed-at': optional(ONE_LINE),
    unverified: optional(ONE_LINE),
  },
  { closed: true },
)
export type SourceDoc = Infer<typeof SOURCE_DOC>

const RENAMED_DOC = object({ name: METRIC, before: optional(VALUE), unit: optional(NAME) }, { closed: true })

/** The engine part of a profile: everything but its knobs. */
export const ENGINE_SHAPE = {
  name: NAME,
  summary: ONE_LINE,
  'verified-against': optional(ONE_LINE),
  process: text('a process name of [A-Za-z0-9_.-] not starting with "-"', /^[A-Za-z0-9_.][A-Za-z0-9_.-]{0,63}$/),
  help: object(
    { command: COMMAND, flag: optional(COMMAND), layout: literal('argparse', 'llama'), 'none-is-unset': optional(SWITCH) },
    { closed: true },
  ),
  parser: object(
    {
      'underscore-is-dash': SWITCH,
      abbreviations: SWITCH,
      'last-wins': SWITCH,
      'config-flag': optional(FLAG),
      negation: optional(text('a flag prefix, e.g. --no-', /^--[A-Za-z0-9-]*-$/)),
      'env-twins': optional(SWITCH),
    },
    { closed: true },
  ),
  log: optional(object({ prefix: optional(REGEX), boot: optional(REGEX) }, { closed: true })),
  resolved: array(SOURCE_DOC, { max: 16 }),
  health: object(
    {
      numeric: optional(array(LABEL, { max: 8 })),
      equal: optional(record(VALUE, { re: /^[A-Za-z_][A-Za-z0-9_]*$/, says: 'a field name' })),
      body: optional(literal('empty')),
    },
    { closed: true },
  ),
  metrics: object(
    {
      'model-label': optional(LABEL),
      requests: optional(METRIC),
      'prompt-tokens': optional(METRIC),
      'generation-tokens': optional(METRIC),
      'step-time': optional(object({ steps: METRIC, 'steps-decode': METRIC, seconds: METRIC, 'seconds-decode': METRIC }, { closed: true })),
      effect: optional(
        object(
          {
            ttft: optional(METRIC),
            itl: optional(METRIC),
            e2e: optional(METRIC),
            'requests-match': optional(MATCHERS),
            preemptions: optional(METRIC),
            'prompt-seconds': optional(METRIC),
            'generation-seconds': optional(METRIC),
          },
          { closed: true },
        ),
      ),
      prefixes: optional(array(NAME, { max: 8 })),
      renamed: optional(record(array(RENAMED_DOC, { max: 8 }), { re: METRIC_NAME, says: 'a metric name' })),
    },
    { closed: true },
  ),
  probes: optional(object({ 'tool-setup': ONE_LINE, 'tool-parser': ONE_LINE, 'vision-setup': ONE_LINE }, { closed: true })),
} as const

export const ENGINE_DOC = object(ENGINE_SHAPE, { closed: true })
export type EngineDoc = Infer<typeof ENGINE_DOC>

/** A whole profile file: the engine, and its knobs. */
export const PROFILE_DOC = object({ ...ENGINE_SHAPE, knobs: KNOBS }, { closed: true })
export type ProfileDoc = Infer<typeof PROFILE_DOC>

/** A catalog file (`--catalog FILE`): knobs added to the profile's, or replacing one of the same name. */
export const CATALOG_DOC = object({ knobs: KNOBS }, { closed: true })
export type CatalogDoc = Infer<typeof CATALOG_DOC>
