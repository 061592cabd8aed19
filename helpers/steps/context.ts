// What one run of the proof carries from step to step: the target, the seams, and the facts a
// step found that a later step needs (the build's default, whether /health came up, …).
import type { Clock } from '../seams/clock.ts'
import type { Target } from '../config/load.ts'
import type { HostClient } from '../seams/host.ts'
import type { HttpClient } from '../seams/http.ts'
import { knob, type KnobSpec } from '../config/knobs.ts'
import type { MetricsReading } from './meter/reading.ts'

export interface RunFacts {
  /** What the build's --help says about the knob's flag. */
  help?: { default: string | null; choices: string[] | null }
  /** /health answered 200 at least once. */
  healthy?: boolean
  /** /metrics read before the probes sent their traffic. */
  baseline?: MetricsReading
  /** The one engine process step `argv` read, and whether its command line held (the flag as expected). */
  engineProcess?: { pid: string; argvHeld: boolean }
  /** Resolved model id for the probes (promise shared by the three probes). */
  model?: Promise<string>
}

/** Random choices of a run (the exact word, the vision colour): recorded, and fed back in replay. */
export interface Choices {
  pick<T>(name: string, options: readonly T[]): T
}

export interface RunContext {
  target: Target
  spec: KnobSpec
  http: HttpClient
  host: HostClient
  clock: Clock
  choices: Choices
  facts: RunFacts
  /** Shows a progress line during long waits (terminal only; quiet in CI). */
  progress(message: string): void
}

export function randomChoices(random: () => number = Math.random): Choices & { made: Record<string, unknown> } {
  const made: Record<string, unknown> = {}
  return {
    made,
    pick(name, options) {
      const value = options[Math.floor(random() * options.length)]!
      made[name] = value
      return value
    },
  }
}

export function createContext(parts: Omit<RunContext, 'spec' | 'facts' | 'progress'> & { progress?: (m: string) => void }): RunContext {
  return { ...parts, spec: knob(parts.target.knob), facts: {}, progress: parts.progress ?? (() => {}) }
}

/** The value the knob should have now: the operator's, else the catalog's default, else the build's (--help). */
export function expectedValue(ctx: RunContext): string | undefined {
  return ctx.target.value ?? defaultValue(ctx)
}

/** The knob's default: the catalog's, else the build's (--help). */
export function defaultValue(ctx: RunContext): string | undefined {
  return ctx.spec.default ?? ctx.facts.help?.default ?? undefined
}

export function endpointUrl(ctx: RunContext, path: string): string {
  return `${ctx.target.baseUrl ?? 'http://replay.invalid'}${path}`
}

/** Headers for /v1/* calls: the API key goes only there (vLLM leaves /health and /metrics open). */
export function v1Headers(ctx: RunContext): Record<string, string> {
  return {
    'content-type': 'application/json',
    ...(ctx.target.apiKey ? { authorization: `Bearer ${ctx.target.apiKey}` } : {}),
  }
}
