// The endpoints an engine describes itself on (the profile's json and info-metric sources), read
// through the HTTP seam once /health answered: SGLang's /server_info (and, where a build answers
// 404 there, the older /get_server_info), llama.cpp's /props, vLLM's /server_info (served only
// under VLLM_SERVER_DEV_MODE=1: not served is said, not failed), and the labels of an info gauge
// on /metrics (vLLM's cache_config_info: from the page the meter's baseline already read, where it
// did: one GET fewer, and the page its start time tied to the pid). Never with the API key:
// armproof sends it only to /v1/*. A source the profile does not call optional that answers 200
// without the knob's key is unreadable (inconclusive), never silent: the build or the server
// answering there is not the one the profile knows.
import { HttpError } from '../../seams/http.ts'
import { parsePrometheusText, contentTypeFormat } from '../../prom/parse.ts'
import type { SourceSpec } from '../../profiles/types.ts'
import { endpointUrl, type RunContext } from '../context.ts'
import type { SourceReading } from './log-sources.ts'
import type { MetricsReading } from '../meter/reading.ts'

const TIMEOUT_MS = 15_000

/** A JSON value at a dotted path, as text the way the engine's other sources print it (true → True is the knob's to read). */
function jsonAt(body: unknown, path: string): { found: true; raw: string | null } | { found: false } {
  let at: unknown = body
  for (const key of path.split('.')) {
    if (at === null || typeof at !== 'object' || Array.isArray(at) || !Object.hasOwn(at, key)) return { found: false }
    at = (at as Record<string, unknown>)[key]
  }
  if (at === null) return { found: true, raw: null }
  return {
    found: true,
    raw: typeof at === 'string' ? at : typeof at === 'number' || typeof at === 'boolean' ? String(at) : JSON.stringify(at),
  }
}

async function readJson(ctx: RunContext, source: SourceSpec, key: string): Promise<SourceReading> {
  const paths = source.paths ?? []
  const tried: string[] = []
  for (const [i, path] of paths.entries()) {
    const url = endpointUrl(ctx, path)
    let res
    try {
      res = await ctx.http.request({ method: 'GET', url, timeoutMs: TIMEOUT_MS, followRedirects: true, maxBodyBytes: 4 * 1024 * 1024 })
    } catch (error) {
      if (!(error instanceof HttpError)) throw error
      return { source, key, state: 'unreadable', where: `GET ${url}`, problem: `GET ${url} did not answer (${error.message})` }
    }
    if (res.status === 404 && i < paths.length - 1) {
      tried.push(path)
      continue
    }
    if (res.status === 404) {
      const all = [...tried, path].join(' nor ')
      if (source.optional)
        return {
          source,
          key,
          state: 'silent',
          where: `GET ${url}`,
          problem: `not served (${all} answers 404: the engine serves it only when so configured)`,
        }
      return {
        source,
        key,
        state: 'unreadable',
        where: `GET ${url}`,
        problem: `the engine serves neither ${all} (404): the ${ctx.engine.name} profile does not know this build's self-description`,
      }
    }
    if (res.status === 401 || res.status === 403)
      return {
        source,
        key,
        state: 'unreadable',
        where: `GET ${url}`,
        problem: `${path} answers HTTP ${res.status}: the engine (or a gateway) guards it, and armproof sends the API key only to /v1/*`,
      }
    if (res.status !== 200)
      return {
        source,
        key,
        state: 'unreadable',
        where: `GET ${url}`,
        problem: `${path} answers HTTP ${res.status}: ${res.body.slice(0, 120)}`,
      }
    let body: unknown
    try {
      body = JSON.parse(res.body)
    } catch {
      return {
        source,
        key,
        state: 'unreadable',
        where: `GET ${url}`,
        problem: `${path} is not JSON: ${JSON.stringify(res.body.slice(0, 80))}`,
      }
    }
    const v = jsonAt(body, key)
    const older = i > 0 ? { olderPath: path } : {}
    if (!v.found) {
      if (source.optional) return { source, key, state: 'no-key', where: `GET ${url}`, text: res.body.slice(0, 400), ...older }
      return {
        source,
        key,
        state: 'unreadable',
        where: `GET ${url}`,
        problem: `${path} answered 200 without ${key} (${JSON.stringify(res.body.slice(0, 120))}): not the ${ctx.engine.name} self-description its profile knows (another build, or another server at the base URL)`,
        ...older,
      }
    }
    return { source, key, state: 'value', raw: v.raw, where: `GET ${url}`, text: `${key}: ${v.raw ?? 'null'}`, ...older }
  }
  return { source, key, state: 'silent', problem: 'no path to ask' }
}

/** The info gauge's series on a page: the baseline's where it read them, else a GET of its own. */
async function infoSeries(
  ctx: RunContext,
  name: string,
  page: MetricsReading | undefined,
): Promise<
  { samples: Array<{ labels: Readonly<Record<string, string>>; raw: string }>; where: string } | { failed: string; where: string }
> {
  const kept = page?.series[name]
  if (page && kept)
    return {
      samples: kept.map((s) => ({
        labels: s.labels,
        raw: `${name}{${Object.entries(s.labels)
          .map(([k, v]) => `${k}="${v}"`)
          .join(',')}} ${s.raw}`,
      })),
      where: `GET ${page.url} (the meter's baseline page, before the probes)`,
    }
  const url = endpointUrl(ctx, '/metrics')
  let res
  try {
    res = await ctx.http.request({
      method: 'GET',
      url,
      timeoutMs: TIMEOUT_MS,
      followRedirects: true,
      headers: { 'accept-encoding': 'gzip', accept: 'text/plain;version=0.0.4;q=0.9,*/*;q=0.1' },
    })
  } catch (error) {
    if (!(error instanceof HttpError)) throw error
    return { failed: `GET ${url} did not answer (${error.message})`, where: `GET ${url}` }
  }
  if (res.status !== 200) return { failed: `/metrics answers HTTP ${res.status}`, where: `GET ${res.url}` }
  const parsed = parsePrometheusText(res.body, { format: contentTypeFormat(res.headers['content-type']), keep: (n) => n === name })
  return { samples: parsed.samples(name).map((s) => ({ labels: s.labels, raw: s.raw })), where: `GET ${res.url}` }
}

async function readInfoMetric(ctx: RunContext, source: SourceSpec, key: string, page: MetricsReading | undefined): Promise<SourceReading> {
  const name = source.metric!
  const read = await infoSeries(ctx, name, page)
  const where = read.where
  if ('failed' in read) return { source, key, state: 'unreadable', where, problem: read.failed }
  const samples = read.samples
  if (samples.length === 0)
    return {
      source,
      key,
      state: 'unreadable',
      where,
      problem: `${name} is absent from /metrics: the ${ctx.engine.name} profile does not know this build`,
    }
  const values = [...new Set(samples.map((s) => s.labels[key]))]
  if (values.length > 1)
    return {
      source,
      key,
      state: 'unreadable',
      where,
      problem: `${name}'s ${samples.length} series say ${values.map((v) => JSON.stringify(v ?? null)).join(' and ')} for ${key}: which one the served engine runs cannot be told`,
    }
  const raw = values[0]
  if (raw === undefined) {
    if (source.optional) return { source, key, state: 'no-key', where, text: samples[0]!.raw }
    return {
      source,
      key,
      state: 'unreadable',
      where,
      problem: `${name} carries no ${key} label (${samples[0]!.raw.slice(0, 160)}): not the ${ctx.engine.name} build its profile knows`,
    }
  }
  return { source, key, state: 'value', raw: raw === 'None' ? null : raw, where, text: `${name}{${key}="${raw}"}` }
}

/** What each endpoint source (with the knob's key there) says, asked one after another. */
export async function readEndpointSources(
  ctx: RunContext,
  sources: ReadonlyArray<{ source: SourceSpec; key: string }>,
  page?: MetricsReading,
): Promise<SourceReading[]> {
  const out: SourceReading[] = []
  for (const { source, key } of sources)
    out.push(source.shape === 'info-metric' ? await readInfoMetric(ctx, source, key, page) : await readJson(ctx, source, key))
  return out
}
