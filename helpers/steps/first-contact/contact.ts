// First contact: one GET /health, then one GET /v1/models and one HEAD /metrics side by side,
// before any proof step is judged, and on the host, whether anything serves the base URL's port
// (helpers/engine/unserved.ts). What they show that only the operator can fix (a host name
// that does not resolve, a certificate this process does not trust, https:// against a plain-HTTP
// port, a key refused with 401/403, a /health that is not there, a redirect that cannot be
// followed or leaves the base URL's origin, a gateway guarding /metrics, a --model the endpoint
// does not serve, a port no engine on --host listens on) ends the run at once, exit 2, with the
// cause and the fix in one line, instead of waiting out a budget. What may pass by itself (refused,
// reset, a timeout, EAI_AGAIN, 503: an engine still loading) is left to the health step and its
// budget. The judging of each answer is ./answers.ts.
import type { Target } from '../../config/load.ts'
import { HttpError, liveHttp, type HttpClient, type HttpRequest } from '../../seams/http.ts'
import { liveHost, liveOptions } from '../../seams/open.ts'
import { redactText } from '../../seams/redact.ts'
import { engineQuery } from '../../engine/query.ts'
import { unservedPort } from '../../engine/unserved.ts'
import { fromError, fromHealth, fromMetrics, fromModels, type FirstContactProblem } from './answers.ts'

export type { FirstContactProblem }

/** How long each first-contact request may take: a loading engine is the health step's to wait for. */
export const FIRST_CONTACT_TIMEOUT_MS = 10_000

/** The most of a first-contact body read: /v1/models is small; /metrics is asked with HEAD. */
const MAX_BODY = 1024 * 1024

/**
 * The first-contact check of a live or record run; undefined when nothing found needs the
 * operator (including every transient failure). Never throws for an HTTP failure.
 */
export async function firstContact(target: Target, http: HttpClient): Promise<FirstContactProblem | undefined> {
  if (target.mode === 'replay' || target.baseUrl === null) return undefined
  const ask = async (method: HttpRequest['method'], path: string, headers: Record<string, string>) => {
    const url = `${target.baseUrl}${path}`
    const where = `${method} ${url}`
    try {
      return {
        where,
        res: await http.request({
          method,
          url,
          headers,
          timeoutMs: FIRST_CONTACT_TIMEOUT_MS,
          followRedirects: true,
          maxBodyBytes: MAX_BODY,
        }),
      }
    } catch (error) {
      if (!(error instanceof HttpError)) throw error
      return { where, problem: fromError(error, target, where) }
    }
  }
  const health = await ask('GET', '/health', {})
  if (!health.res) return health.problem
  const healthProblem = fromHealth(health.res, target, health.where)
  if (healthProblem) return healthProblem
  // /metrics is read without the key, as the meter reads it (vLLM serves it open); with
  // --prometheus-url the meter is read there and this run does not scrape /metrics.
  // HEAD: its status, never a scrape (Prometheus never sends one); a server that takes no HEAD
  // (405, 501) is asked with GET, its body left unread past the cap.
  const askMetrics = async () => {
    const head = await ask('HEAD', '/metrics', {})
    return head.res && (head.res.status === 405 || head.res.status === 501) ? ask('GET', '/metrics', {}) : head
  }
  const [models, metrics] = await Promise.all([
    ask('GET', '/v1/models', target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}),
    target.prometheusUrl === null ? askMetrics() : Promise.resolve(undefined),
  ])
  return (
    (models.res ? fromModels(models.res, target, models.where) : models.problem) ??
    (metrics?.res ? fromMetrics(metrics.res, metrics.where) : metrics?.problem)
  )
}

/** A first-contact refusal ready to print: the key redacted, and the one line the operator reads. */
export interface FirstContactRefusal {
  /** Cause and fix, redacted. */
  message: string
  where: string
  /** `armproof: <message> [first contact: <where>; no proof step was judged]` */
  line: string
}

/**
 * First contact of one target through its own live seam (its --ca-file honoured, the key kept to
 * its origin), closed after: what `pnpm verify`, a fleet and the suites' global setup all ask
 * before a target's steps. `hostEnv`: extra environment for its local host commands (as openSeams').
 */
export async function contactTarget(target: Target, hostEnv?: Record<string, string>): Promise<FirstContactRefusal | undefined> {
  if (target.mode === 'replay' || target.baseUrl === null) return undefined
  const http = liveHttp(liveOptions(target))
  // The host side, beside the HTTP side: a port nothing on --host serves (helpers/engine/unserved.ts);
  // the endpoint's own answer, when it has something to say, is said first, and the host side is
  // then cancelled (its programs ended with their process groups): none outlives the run.
  const hostSide = new AbortController()
  const host = unservedPort(liveHost(target, hostEnv).host, engineQuery(target), target.baseUrl, hostSide.signal)
  void host.catch(() => {}) // awaited below; never an unhandled rejection if the HTTP side throws first
  let problem: FirstContactProblem | undefined
  let wanted = false
  try {
    problem = await firstContact(target, http)
    wanted = problem === undefined
  } finally {
    if (!wanted) hostSide.abort()
    await http.close()
  }
  problem ??= await host
  if (!problem) return undefined
  const message = redactText(problem.message, target.apiKey)
  return { message, where: problem.where, line: `armproof: ${message} [first contact: ${problem.where}; no proof step was judged]` }
}
