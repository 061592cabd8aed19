// The endpoints an engine describes itself on (the profile's json and info-metric sources), read
// through the HTTP seam once /health answered: SGLang's /server_info (and, where a build answers
// 404 there, the older /get_server_info), llama.cpp's /props, vLLM's /server_info (served only
// under VLLM_SERVER_DEV_MODE=1: not served is said, not failed), and the labels of an info gauge
// on /metrics (vLLM's cache_config_info). Never with the API key: armproof sends it only to /v1/*.
import { HttpError } from '../../seams/http.ts'
import { parsePrometheusText, contentTypeFormat } from '../../prom/parse.ts'
import type { SourceSpec } from '../../profiles/types.ts'
import { endpointUrl, type RunContext } from '../context.ts'
import type { SourceReading } from './log-sources.ts'

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
    if (!v.found) return { source, key, state: 'no-key', where: `GET ${url}`, text: res.body.slice(0, 400), ...older }
    return { source, key, state: 'value', raw: v.raw, where: `GET ${url}`, text: `${key}: ${v.raw ?? 'null'}`, ...older }
  }
  return { source, key, state: 'silent', problem: 'no path to ask' }
}

async function readInfoMetric(ctx: RunContext, source: SourceSpec, key: string): Promise<SourceReading> {
  const url = endpointUrl(ctx, '/metrics')
  const name = source.metric!
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
    return { source, key, state: 'unreadable', where: `GET ${url}`, problem: `GET ${url} did not answer (${error.message})` }
  }
  if (res.status !== 200)
    return { source, key, state: 'unreadable', where: `GET ${res.url}`, problem: `/metrics answers HTTP ${res.status}` }
  const page = parsePrometheusText(res.body, { format: contentTypeFormat(res.headers['content-type']), keep: (n) => n === name })
  const samples = page.samples(name)
  if (samples.length === 0)
    return {
      source,
      key,
      state: 'unreadable',
      where: `GET ${res.url}`,
      problem: `${name} is absent from /metrics: the ${ctx.engine.name} profile does not know this build`,
    }
  const values = [...new Set(samples.map((s) => s.labels[key]))]
  if (values.length > 1)
    return {
      source,
      key,
      state: 'unreadable',
      where: `GET ${res.url}`,
      problem: `${name}'s ${samples.length} series say ${values.map((v) => JSON.stringify(v ?? null)).join(' and ')} for ${key}: which one the served engine runs cannot be told`,
    }
  const raw = values[0]
  if (raw === undefined) return { source, key, state: 'no-key', where: `GET ${res.url}`, text: samples[0]!.raw }
  return { source, key, state: 'value', raw: raw === 'None' ? null : raw, where: `GET ${res.url}`, text: `${name}{${key}="${raw}"}` }
}

/** What each endpoint source (with the knob's key there) says, asked one after another. */
export async function readEndpointSources(
  ctx: RunContext,
  sources: ReadonlyArray<{ source: SourceSpec; key: string }>,
): Promise<SourceReading[]> {
  const out: SourceReading[] = []
  for (const { source, key } of sources)
    out.push(source.shape === 'info-metric' ? await readInfoMetric(ctx, source, key) : await readJson(ctx, source, key))
  return out
}
