// The routes of `armproof serve`, matched on the request target exactly as it came, never decoded
// or normalised: a service name needs no escaping ([A-Za-z0-9_.-]), so `%2e%2e`, `/verify/../x`,
// `//verify/x`, a trailing slash, or a query are not a route (a query would be an option, and the
// request chooses a target only). The absolute form (`POST http://serve:8080/verify/llm-7`, which
// HTTP/1.1 servers must accept, RFC 9112 3.2.2) is matched on its path; its authority chooses nothing.

export type Route =
  | { kind: 'run'; answer: 'status' | 'body'; svc: string }
  | { kind: 'start'; svc: string }
  | { kind: 'poll'; id: string }
  | { kind: 'healthz' }
  | { kind: 'metrics' }
  | { kind: 'bad'; message: string }
  | { kind: 'none' }

/** Methods each kind of route answers (HEAD is GET without its body). */
export const ALLOWED: Readonly<Record<'run' | 'start' | 'poll' | 'healthz' | 'metrics', readonly string[]>> = {
  run: ['POST'],
  start: ['POST'],
  poll: ['GET', 'HEAD'],
  healthz: ['GET', 'HEAD'],
  metrics: ['GET', 'HEAD'],
}

/** The longest svc a request can name: a targets file's svc past it could never be asked (refused at start). */
export const MAX_SVC_CHARS = 128
/** A service name as a route takes it. */
export const SVC_WORD = new RegExp(`^[A-Za-z0-9_.-]{1,${MAX_SVC_CHARS}}$`)
/** Why an svc of the targets file can never be asked, or undefined when it can. */
export function unaskable(svc: string): string | undefined {
  if (!SVC_WORD.test(svc) || /^\.+$/.test(svc))
    return `a request can never name it: POST /verify/<svc> takes 1 to ${MAX_SVC_CHARS} characters of [A-Za-z0-9_.-], not only dots`
  return undefined
}

/** An asynchronous run's id: what serve gives (or the client chose: POST /runs/<svc> with {"id": …}). */
export const RUN_ID = /^[A-Za-z0-9_.-]{8,160}$/

const RUN = new RegExp(`^/(verify|analysis|runs)/([A-Za-z0-9_.-]{1,${MAX_SVC_CHARS}})$`)
const POLL = /^\/runs\/([A-Za-z0-9_.-]{8,160})$/
const ABSOLUTE = /^https?:\/\/[A-Za-z0-9.-]+(?::\d{1,5})?|^https?:\/\/\[[0-9A-Fa-f:.]+\](?::\d{1,5})?/i

/** The path part of an origin-form or absolute-form target; undefined for anything else. */
function pathOf(rawTarget: string): string | undefined {
  if (rawTarget.startsWith('/')) return rawTarget
  const m = ABSOLUTE.exec(rawTarget)
  if (!m) return undefined
  const rest = rawTarget.slice(m[0].length)
  return rest.startsWith('/') ? rest : undefined
}

export function route(rawTarget: string, method = 'POST'): Route {
  const target = pathOf(rawTarget)
  if (target === undefined) return { kind: 'none' }
  const q = target.indexOf('?')
  const path = q < 0 ? target : target.slice(0, q)
  if (path === '/healthz') return q < 0 ? { kind: 'healthz' } : { kind: 'bad', message: '/healthz takes no query' }
  if (path === '/metrics') return q < 0 ? { kind: 'metrics' } : { kind: 'bad', message: '/metrics takes no query' }
  // /runs/<x>: a POST names a target to start; anything else asks for a run by its id.
  const poll = POLL.exec(path)
  if (poll && method !== 'POST') {
    if (q >= 0) return { kind: 'bad', message: 'GET /runs/<id> takes no query' }
    return { kind: 'poll', id: poll[1]! }
  }
  const m = RUN.exec(path)
  if (!m) return { kind: 'none' }
  if (/^\.+$/.test(m[2]!)) return { kind: 'bad', message: `${JSON.stringify(m[2])} is a path segment, not a service name` }
  if (q >= 0)
    return { kind: 'bad', message: `POST /${m[1]}/<svc> takes no query: the request names a target, its options are the targets file's` }
  if (m[1] === 'runs') return { kind: 'start', svc: m[2]! }
  return { kind: 'run', answer: m[1] === 'verify' ? 'status' : 'body', svc: m[2]! }
}
