// A knob's values: whether one fits the knob's type, and the one form two values are compared in
// (`007` is 7, `True` is true, llama.cpp's `-1` is auto). Pure.
import type { KnobSpec } from './types.ts'

/** Why a value does not fit the knob's type, or undefined when it fits. Enum values are checked later against --help. */
export function valueProblem(spec: Pick<KnobSpec, 'type' | 'readAs'>, value: string): string | undefined {
  const t = spec.type
  if (t.kind === 'enum') {
    return /^[A-Za-z0-9_.-]{1,64}$/.test(value)
      ? undefined
      : `must be one word of letters, digits, "_", "." or "-" (the choices come from the build's --help)`
  }
  if (t.kind === 'bool') return value === 'true' || value === 'false' ? undefined : 'must be true or false'
  if (t.kind === 'int-or-auto' && (value === 'auto' || spec.readAs?.[value] === 'auto')) return undefined
  const whole = t.min < 0 ? /^-?\d{1,9}$/ : /^\d{1,9}$/
  if (!whole.test(value)) {
    return t.kind === 'int-or-auto'
      ? `must be "auto" or a whole number ≥ ${t.min}`
      : `must be a whole number ≥ ${t.min}${t.unit ? ` (${t.unit})` : ''}`
  }
  if (Number(value) < t.min) return `must be ≥ ${t.min}`
  return undefined
}

/** Normalises a value for comparison (e.g. "007" → "7", "True" → "true", a `read-as` spelling → what it means). */
export function canonicalValue(spec: Pick<KnobSpec, 'type' | 'readAs'>, value: string): string {
  const meant = spec.readAs?.[value]
  if (meant !== undefined) return meant
  if (spec.type.kind === 'bool')
    return value === 'True' || value === 'true' ? 'true' : value === 'False' || value === 'false' ? 'false' : value
  return (spec.type.kind === 'int' || spec.type.kind === 'int-or-auto') && /^-?\d+$/.test(value) ? String(Number(value)) : value
}

/**
 * Whether the knob's meter must stay at zero at `value` (null: the default): at a value in its
 * `off` list; without one, at its default (radiance's knobs, whose default turns them off).
 */
export function meterStill(
  spec: Pick<KnobSpec, 'off' | 'default' | 'type' | 'readAs'>,
  value: string | null,
  buildDefault?: string | null,
): boolean {
  const fallback = spec.default ?? buildDefault ?? null
  const v = value ?? fallback
  if (spec.off) return v !== null && spec.off.some((o) => canonicalValue(spec, o) === canonicalValue(spec, v))
  return value === null || (fallback !== null && value === fallback)
}
