// Which of the meter's series are the served engine's: by `model_name` when the page gives it
// (never another model's), every series when it gives none. Each judged series stands alone.
import { seriesName, type SeriesValue } from './reading.ts'

export type Selection =
  | { judged: SeriesValue[]; notJudged: SeriesValue[]; how: string }
  | { problem: 'failed' | 'inconclusive'; observed: string; next: string; models: string[] }

/** `otherModelOnly`: the source's words for a page that has the meter only for other models. */
export function select(
  samples: readonly SeriesValue[],
  model: string | undefined,
  meterName: string,
  otherModelOnly: (models: readonly string[]) => { observed: string; next: string },
): Selection {
  const named = samples.filter((s) => s.labels.model_name !== undefined)
  const list = (xs: readonly SeriesValue[]) => xs.map((s) => seriesName(meterName, s.labels)).join(', ')
  if (named.length === 0)
    return {
      judged: [...samples],
      notJudged: [],
      how: `the page names no model_name on ${meterName}: judged ${samples.length === 1 ? 'its one series' : `each of its ${samples.length} series`} (${list(samples)})`,
    }
  const models = [...new Set(named.map((s) => s.labels.model_name!))].sort()
  if (model === undefined) {
    if (models.length === 1)
      return {
        judged: named,
        notJudged: samples.filter((s) => s.labels.model_name === undefined),
        how: `the probed model is unknown; judged the page's only model_name "${models[0]}"`,
      }
    return {
      problem: 'inconclusive',
      observed: `${meterName} has series for ${models.length} models (${models.join(', ')}) and the probed model is unknown`,
      next: "pass --model with the id this endpoint serves, so the served model's own series is judged",
      models,
    }
  }
  const judged = named.filter((s) => s.labels.model_name === model)
  if (judged.length === 0) return { problem: 'failed', ...otherModelOnly(models), models }
  return {
    judged,
    notJudged: samples.filter((s) => s.labels.model_name !== model),
    how: `judged the served model's ${judged.length === 1 ? 'series' : `${judged.length} series`} (model_name="${model}")`,
  }
}
