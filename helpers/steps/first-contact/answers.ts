// What each answer of first contact (./contact.ts) means for the operator: a problem (cause
// and fix in one line) only where waiting cannot help and the fix is theirs; undefined otherwise.
// The one rule: the proof steps judge the same answers by it when they meet them later (an
// engine still loading at first contact, ../mistake.ts): health's /health, the probes' /v1/models
// and /v1/chat/completions (`fromV1`), the meter's /metrics.
import type { Target } from '../../config/load.ts'
import type { HttpError, HttpResponse } from '../../seams/http.ts'
import { modelCards } from '../../seams/models.ts'

export interface FirstContactProblem {
  /** What was asked, e.g. `GET http://gpu-7:8000/health`. */
  where: string
  /** Cause and fix, one line. */
  message: string
}

/** How many of the ids /v1/models lists a message names. */
const MAX_IDS_SHOWN = 10

function pathOf(where: string): string {
  return new URL(where.slice(where.indexOf(' ') + 1)).pathname
}

/** The HttpError's own detail, without its "<failure> at <url>: " lead. */
function detailOf(error: HttpError): string {
  return error.message.replace(/^.*? at \S+: /, '')
}

export function fromError(error: HttpError, target: Target, where: string): FirstContactProblem | undefined {
  const base = new URL(target.baseUrl!)
  if (error.failure === 'dns' && error.sysCode === 'ENOTFOUND') {
    return {
      where,
      message: `--base-url: the host name ${JSON.stringify(base.hostname)} does not resolve (ENOTFOUND); check the name in --base-url, or use the endpoint's IP address`,
    }
  }
  if (error.failure === 'tls') {
    return {
      where,
      message: `--base-url: TLS verification of ${base.host} failed (${error.sysCode ?? 'certificate not trusted'}); pass the CA that signed it with --ca-file PATH (or VERIFY_CA_FILE; NODE_EXTRA_CA_CERTS=PATH works too)`,
    }
  }
  if (error.failure === 'not-tls') {
    const plain = target.baseUrl!.replace(/^https:/, 'http:')
    return {
      where,
      message: `--base-url: ${base.host} does not speak TLS (${error.sysCode ?? 'the handshake got no TLS answer'}): the port serves plain HTTP, so https:// cannot reach it; pass --base-url ${plain}`,
    }
  }
  if (error.failure === 'redirect') {
    return {
      where,
      message: `${pathOf(where)}: ${detailOf(error)}; a proxy before the engine builds its redirect wrongly (nginx: a Location made of $host:$server_port, the port written twice): fix the proxy's redirect, or point --base-url at the engine itself`,
    }
  }
  return undefined
}

/**
 * An answer from another origin than the base URL's: a redirect followed there (first contact
 * follows them), or one not followed that points there (the probes follow none).
 */
function leftOrigin(res: HttpResponse, target: Target, path: string, where: string): FirstContactProblem | undefined {
  const origin = new URL(target.baseUrl!).origin
  const location = res.status >= 300 && res.status < 400 ? res.headers.location : undefined
  const to = location !== undefined && URL.canParse(location, res.url) ? new URL(location, res.url).href : res.url
  const landed = new URL(to).origin
  if (landed === origin) return undefined
  const key =
    target.apiKey !== null
      ? ' armproof did not send the key there (it stays with the origin of --base-url, as curl and browsers keep it);'
      : ''
  const status = to === res.url ? `HTTP ${res.status} there` : `HTTP ${res.status}, not followed`
  return {
    where,
    message: `${path} redirects to another origin, ${to} (${status}):${key} the probes post to ${origin}/v1/chat/completions and follow no redirect: pass --base-url ${landed} if the engine is there, or point it at the engine itself`,
  }
}

function keyProblem(res: HttpResponse, target: Target, path: string, where: string): FirstContactProblem | undefined {
  if (res.status !== 401 && res.status !== 403) return undefined
  const fix =
    path === '/health'
      ? `armproof sends the key only on /v1/* (as vLLM guards only those); point --base-url at the engine itself, not at a gateway that guards /health`
      : target.apiKey !== null
        ? "the key given is refused: check VERIFY_API_KEY or the --api-key-file it came from (expired, another endpoint's key?)"
        : 'the endpoint wants a key and none was given: set VERIFY_API_KEY (env or .env) or pass --api-key-file PATH'
  return { where, message: `${path} answers HTTP ${res.status} (the key): ${fix}` }
}

/** /health: the key (401/403), the path (404), or plain HTTP sent to a TLS port (nginx's 400). */
export function fromHealth(res: HttpResponse, target: Target, where: string): FirstContactProblem | undefined {
  const keyed = keyProblem(res, target, '/health', where)
  if (keyed) return keyed
  if (res.status === 404) {
    return {
      where,
      message: `/health answers HTTP 404 (the path): --base-url must be the engine's root, where /health, /metrics and /v1 live, e.g. ${new URL(target.baseUrl!).origin}; got ${target.baseUrl}`,
    }
  }
  // nginx answers plain HTTP on an `ssl` port with 400 "The plain HTTP request was sent to HTTPS port".
  if (res.status === 400 && /plain HTTP request was sent to HTTPS port/i.test(res.body)) {
    return {
      where,
      message: `--base-url: ${new URL(target.baseUrl!).host} speaks TLS (HTTP 400 "The plain HTTP request was sent to HTTPS port"); pass --base-url ${target.baseUrl!.replace(/^http:/, 'https:')}`,
    }
  }
  return undefined
}

/**
 * /v1/models: a redirect that left the base URL's origin (the key was not sent there, and the
 * probes would not be answered here), the key (401/403), the path (404), or a --model it does not list.
 */
export function fromModels(res: HttpResponse, target: Target, where: string): FirstContactProblem | undefined {
  const origin = new URL(target.baseUrl!).origin
  const away = leftOrigin(res, target, '/v1/models', where)
  if (away) return away
  const keyed = keyProblem(res, target, '/v1/models', where)
  if (keyed) return keyed
  if (res.status === 404) {
    return {
      where,
      message: `/v1/models answers HTTP 404 (the path): --base-url must be the engine's root, where /health, /metrics and /v1 live, e.g. ${origin}; got ${target.baseUrl}`,
    }
  }
  if (res.status !== 200 || target.model === null) return undefined
  const ids = modelCards(res.body)?.map((c) => c.id)
  if (ids === undefined || ids.includes(target.model)) return undefined
  const shown = ids
    .slice(0, MAX_IDS_SHOWN)
    .map((id) => JSON.stringify(id))
    .join(', ')
  const lists =
    ids.length === 0 ? 'it lists no model' : `it lists ${shown}${ids.length > MAX_IDS_SHOWN ? `, … (${ids.length} in all)` : ''}`
  return {
    where,
    message: `--model ${JSON.stringify(target.model)}: /v1/models does not list it (${lists}); pass --model with one of those, or leave --model out to probe the first`,
  }
}

/**
 * Any other /v1/* answer (the probes' POST /v1/chat/completions, which follows no redirect): a
 * redirect to another origin, or the key (401/403), as on /v1/models.
 */
export function fromV1(res: HttpResponse, target: Target, path: string, where: string): FirstContactProblem | undefined {
  return leftOrigin(res, target, path, where) ?? keyProblem(res, target, path, where)
}

/** /metrics (asked with HEAD, without the key, as the meter reads it): a gateway guarding it. */
export function fromMetrics(res: HttpResponse, where: string): FirstContactProblem | undefined {
  if (res.status !== 401 && res.status !== 403) return undefined
  return {
    where,
    message: `/metrics answers HTTP ${res.status}: something before the engine guards it (vLLM serves /metrics open, and the meter is read from it without the key, as a Prometheus scrape reads it); point --base-url at the engine itself, not at the gateway, or read the meter through Prometheus with --prometheus-url URL`,
  }
}
