// First contact: one GET /health and one GET /v1/models before any proof step is judged, and on
// the host, whether anything serves the base URL's port (helpers/engine/unserved.ts). What
// they show that only the operator can fix (a host name that does not resolve, a certificate
// this process does not trust, a key refused with 401/403, a /health that is not there) ends the
// run at once, exit 2, with the cause and the fix in one line, instead of waiting out a budget.
// What may pass by itself (refused, reset, a timeout, EAI_AGAIN, 503: an engine still loading)
// is left to the health step and its budget.
import type { Target } from '../config/load.ts'
import { readFileSync } from 'node:fs'
import { HttpError, liveHttp, type HttpClient, type HttpResponse } from './http.ts'
import { redactingHost, redactText } from './redact.ts'
import { createHost } from './host.ts'
import { engineQuery } from '../engine/query.ts'
import { unservedPort } from '../engine/unserved.ts'

/** How long each first-contact request may take: a loading engine is the health step's to wait for. */
export const FIRST_CONTACT_TIMEOUT_MS = 10_000

export interface FirstContactProblem {
  /** What was asked, e.g. `GET http://gpu-7:8000/health`. */
  where: string
  /** Cause and fix, one line. */
  message: string
}

function hostOf(baseUrl: string): string {
  return new URL(baseUrl).hostname
}

function fromError(error: HttpError, target: Target, where: string): FirstContactProblem | undefined {
  const base = target.baseUrl!
  if (error.failure === 'dns' && error.sysCode === 'ENOTFOUND') {
    return { where, message: `--base-url: the host name ${JSON.stringify(hostOf(base))} does not resolve (ENOTFOUND); check the name in --base-url, or use the endpoint's IP address` }
  }
  if (error.failure === 'tls') {
    return {
      where,
      message: `--base-url: TLS verification of ${new URL(base).host} failed (${error.sysCode ?? 'certificate not trusted'}); pass the CA that signed it with --ca-file PATH (or VERIFY_CA_FILE; NODE_EXTRA_CA_CERTS=PATH works too)`,
    }
  }
  return undefined
}

function fromStatus(res: HttpResponse, target: Target, path: '/health' | '/v1/models', where: string): FirstContactProblem | undefined {
  if (res.status === 401 || res.status === 403) {
    const keyed = target.apiKey !== null
    const fix = path === '/health'
      ? `armproof sends the key only on /v1/* (as vLLM guards only those); point --base-url at the engine itself, not at a gateway that guards /health`
      : keyed
        ? 'the key given is refused: check VERIFY_API_KEY or the --api-key-file it came from (expired, another endpoint\'s key?)'
        : 'the endpoint wants a key and none was given: set VERIFY_API_KEY (env or .env) or pass --api-key-file PATH'
    return { where, message: `${path} answers HTTP ${res.status} (the key): ${fix}` }
  }
  if (res.status === 404) {
    return { where, message: `${path} answers HTTP 404 (the path): --base-url must be the engine's root, where /health, /metrics and /v1 live, e.g. ${new URL(target.baseUrl!).origin}; got ${target.baseUrl}` }
  }
  return undefined
}

/**
 * The first-contact check of a live or record run; undefined when nothing found needs the
 * operator (including every transient failure). Never throws for an HTTP failure.
 */
export async function firstContact(target: Target, http: HttpClient): Promise<FirstContactProblem | undefined> {
  if (target.mode === 'replay' || target.baseUrl === null) return undefined
  const ask = async (path: '/health' | '/v1/models', headers: Record<string, string>): Promise<{ problem?: FirstContactProblem; reached: boolean }> => {
    const url = `${target.baseUrl}${path}`
    const where = `GET ${url}`
    try {
      const res = await http.request({ method: 'GET', url, headers, timeoutMs: FIRST_CONTACT_TIMEOUT_MS, followRedirects: true, maxBodyBytes: 1024 * 1024 })
      const problem = fromStatus(res, target, path, where)
      return { ...(problem ? { problem } : {}), reached: true }
    } catch (error) {
      if (!(error instanceof HttpError)) throw error
      const problem = fromError(error, target, where)
      return { ...(problem ? { problem } : {}), reached: false }
    }
  }
  const health = await ask('/health', {})
  if (health.problem || !health.reached) return health.problem
  const models = await ask('/v1/models', target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {})
  return models.problem
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
 * First contact of one target through its own live seam (its --ca-file honoured), closed after:
 * what `pnpm verify`, a fleet and the suites' global setup all ask before a target's steps.
 */
export async function contactTarget(target: Target): Promise<FirstContactRefusal | undefined> {
  if (target.mode === 'replay' || target.baseUrl === null) return undefined
  const http = liveHttp(target.caFile ? { caPem: readFileSync(target.caFile, 'utf8') } : {})
  let problem: FirstContactProblem | undefined
  try {
    problem = await firstContact(target, http)
  } finally {
    await http.close()
  }
  // The host side: a port nothing on --host serves (helpers/engine/unserved.ts).
  problem ??= await unservedPort(redactingHost(createHost({ host: target.host, sshOpts: target.sshOpts, deployUser: target.deployUser, sudo: target.sudo }), target.apiKey), engineQuery(target), target.baseUrl)
  if (!problem) return undefined
  const message = redactText(problem.message, target.apiKey)
  return { message, where: problem.where, line: `armproof: ${message} [first contact: ${problem.where}; no proof step was judged]` }
}
