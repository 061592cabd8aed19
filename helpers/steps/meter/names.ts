// The metric names the meter reads, from the engine profile: the knob's counter and the traffic
// counters, each with the names earlier versions of the engine gave it (vLLM's
// `vllm:gpu_prefix_cache_hits_total` before `vllm:prefix_cache_hits_total`). A page that carries a
// metric only under an earlier name is read through it, and the step says so. Pure.
import type { Engine, Renamed } from '../../profiles/types.ts'

/** A metric and its earlier names, newest first. */
export function namesOf(engine: Engine, name: string): string[] {
  return [name, ...(engine.metrics.renamed[name] ?? []).map((r) => r.name)]
}

/** The earlier name `used` stands for `name`, in words: `vllm:gpu_… (the name before 0.12, counted in blocks)`. */
export function renamedText(engine: Engine, name: string, used: string): string {
  const was: Renamed | undefined = (engine.metrics.renamed[name] ?? []).find((r) => r.name === used)
  const parts = [
    was?.before ? `the name of ${engine.name} builds before ${was.before}` : `an earlier ${engine.name} build's name`,
    ...(was?.unit ? [`counted in ${was.unit}`] : []),
  ]
  return `read through ${used} (${parts.join(', ')}), as this page carries ${name} only under that name`
}

export interface TrafficNames {
  requests: readonly string[]
  promptTokens: readonly string[]
  generationTokens: readonly string[]
}

/** The counters that say whether traffic reached the engine, each with its earlier names (none where the engine has no such counter). */
export function trafficNames(engine: Engine): TrafficNames {
  const m = engine.metrics
  const of = (name: string | undefined): string[] => (name === undefined ? [] : namesOf(engine, name))
  return { requests: of(m.requests), promptTokens: of(m.promptTokens), generationTokens: of(m.generationTokens) }
}

/** Every name of the traffic counters. */
export function allTrafficNames(t: TrafficNames): string[] {
  return [...t.requests, ...t.promptTokens, ...t.generationTokens]
}
