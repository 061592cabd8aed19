// The knob catalog: every knob armproof can prove, as data. A new knob is one entry here (and,
// where it needs one, one reference-engine switch), never a new suite.

/** How a knob's value is written and checked. Enum choices are never listed here: they come from the build's `--help`. */
export type KnobType =
  | { kind: 'int'; min: number; unit?: string }
  | { kind: 'enum' }
  | { kind: 'int-or-auto'; min: number }

/** What proves the engine acted on the knob, besides argv and the ledger. */
export interface KnobProof {
  /** Exact sample name of the counter whose served series must rise (or be above zero in the process argv read) when armed, and stay at zero at the default. */
  meter?: { name: string; labels?: Readonly<Record<string, string>> }
  /** Sample names reported beside the meter as evidence only; they never gate. */
  evidence?: readonly string[]
  /** Dotted path of a `/stats` JSON field that must equal the expected value (knobs without a meter). */
  stats?: string
}

export interface KnobSpec {
  env: string
  flag: `--${string}`
  type: KnobType
  /** The default as the engine resolves it; `null` means "read it from the build's --help". */
  default: string | null
  /** The serve script passes the flag only when the value differs from the default ("unset means default"). */
  passedOnlyWhenNonDefault: boolean
  proof: KnobProof
  summary: string
}

export const KNOBS = {
  PREFILL_INTERLEAVE: {
    env: 'PREFILL_INTERLEAVE',
    flag: '--prefill-interleave',
    type: { kind: 'int', min: 0 },
    default: '0',
    passedOnlyWhenNonDefault: true,
    proof: { meter: { name: 'radiance:engine_steps_held_total' } },
    summary: 'hold decode steps so prefill can interleave',
  },
  BUSY_PREFILL_CHUNK: {
    env: 'BUSY_PREFILL_CHUNK',
    flag: '--busy-prefill-chunk',
    type: { kind: 'int', min: 0, unit: 'tokens' },
    default: '0',
    passedOnlyWhenNonDefault: true,
    proof: { meter: { name: 'radiance:engine_prefill_chunks_capped_total' } },
    summary: 'cap the prefill chunk while the engine is busy',
  },
  CHECKPOINT_POLICY: {
    env: 'CHECKPOINT_POLICY',
    flag: '--checkpoint-policy',
    type: { kind: 'enum' },
    default: null,
    passedOnlyWhenNonDefault: false,
    proof: {
      meter: { name: 'radiance:prefix_hit_cut_tokens_total', labels: { reason: 'no_snapshot' } },
      evidence: ['vllm:num_preemptions_total'],
    },
    summary: 'prefix snapshot policy (prefix retention)',
  },
  CHECKPOINT_SLOTS: {
    env: 'CHECKPOINT_SLOTS',
    flag: '--checkpoint-slots',
    type: { kind: 'int-or-auto', min: 1 },
    default: 'auto',
    passedOnlyWhenNonDefault: false,
    proof: {},
    summary: 'snapshot slots; no meter: the ledger resolved line is the proof',
  },
  STAGER_DEPTH: {
    env: 'STAGER_DEPTH',
    flag: '--stager-depth',
    type: { kind: 'int', min: 0 },
    default: '2',
    passedOnlyWhenNonDefault: false,
    proof: { stats: 'stager.depth' },
    summary: 'prefill stager depth; no metric at all: ledger line and /stats field',
  },
} as const satisfies Record<string, KnobSpec>

export type KnobName = keyof typeof KNOBS
export const KNOB_NAMES = Object.keys(KNOBS) as KnobName[]

export function isKnobName(name: string): name is KnobName {
  return Object.hasOwn(KNOBS, name)
}

export function knob(name: KnobName): KnobSpec {
  return KNOBS[name]
}

/** Why a value does not fit the knob's type, or undefined when it fits. Enum values are checked later against --help. */
export function valueProblem(spec: KnobSpec, value: string): string | undefined {
  const t = spec.type
  if (t.kind === 'enum') {
    return /^[A-Za-z0-9_.-]{1,64}$/.test(value) ? undefined : `must be one word of letters, digits, "_", "." or "-" (the choices come from the build's --help)`
  }
  if (t.kind === 'int-or-auto' && value === 'auto') return undefined
  if (!/^\d{1,9}$/.test(value)) {
    return t.kind === 'int-or-auto' ? `must be "auto" or a whole number ≥ ${t.min}` : `must be a whole number ≥ ${t.min}${t.kind === 'int' && t.unit ? ` (${t.unit})` : ''}`
  }
  if (Number(value) < t.min) return `must be ≥ ${t.min}`
  return undefined
}

/** Normalises a value for comparison (e.g. "007" → "7"). */
export function canonicalValue(spec: KnobSpec, value: string): string {
  return spec.type.kind !== 'enum' && /^\d+$/.test(value) ? String(Number(value)) : value
}
