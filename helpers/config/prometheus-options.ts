// --prometheus-url and --prometheus-match: the meter read through a Prometheus (its URL, no
// credentials in it) instead of /metrics, and the selector that picks the target's series there.
import { parseMatch } from '../prom/query.ts'
import { showValue } from './shell.ts'
import type { OptionReader } from './sources.ts'
import { prometheusUrlProblem } from './url.ts'

export function readPrometheus(read: OptionReader): { prometheusUrl: string | null; prometheusMatch: string | null } {
  let prometheusUrl: string | null = null
  const promRaw = read.raw('prometheus-url')
  if (promRaw && promRaw.value !== '') {
    const why = prometheusUrlProblem(promRaw.value)
    if (why) read.problem(promRaw, why)
    else prometheusUrl = new URL(promRaw.value).href.replace(/\/+$/, '')
  }
  let prometheusMatch: string | null = null
  const matchRaw = read.raw('prometheus-match')
  if (matchRaw && matchRaw.value !== '') {
    const parsed = parseMatch(matchRaw.value)
    if ('error' in parsed) read.problem(matchRaw, `${showValue(matchRaw.value, 80)}: ${parsed.error}`)
    else if (!prometheusUrl && !read.refused('prometheus-url'))
      read.problem(matchRaw, 'only applies with --prometheus-url (the meter is otherwise read from /metrics)')
    else prometheusMatch = matchRaw.value
  }

  return { prometheusUrl, prometheusMatch }
}
