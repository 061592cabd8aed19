// The routes of `armproof serve`, matched on the request target exactly as it came, never decoded
// or normalised: a service name needs no escaping ([A-Za-z0-9_.-]), so `%2e%2e`, `/verify/../x`,
// `//verify/x`, a trailing slash, or a query are not a route (a query would be an option, and the
// request chooses a target only).

export type Route =
  | { kind: 'run'; answer: 'status' | 'body'; svc: string }
  | { kind: 'healthz' }
  | { kind: 'metrics' }
  | { kind: 'bad'; message: string }
  | { kind: 'none' }

/** Methods each kind of route answers (HEAD is GET without its body). */
export const ALLOWED: Readonly<Record<'run' | 'healthz' | 'metrics', readonly string[]>> = {
  run: ['POST'],
  healthz: ['GET', 'HEAD'],
  metrics: ['GET', 'HEAD'],
}

const RUN = /^\/(verify|analysis)\/([A-Za-z0-9_.-]{1,128})$/

export function route(rawTarget: string): Route {
  const q = rawTarget.indexOf('?')
  const path = q < 0 ? rawTarget : rawTarget.slice(0, q)
  if (path === '/healthz') return q < 0 ? { kind: 'healthz' } : { kind: 'bad', message: '/healthz takes no query' }
  if (path === '/metrics') return q < 0 ? { kind: 'metrics' } : { kind: 'bad', message: '/metrics takes no query' }
  const m = RUN.exec(path)
  if (!m) return { kind: 'none' }
  if (/^\.+$/.test(m[2]!)) return { kind: 'bad', message: `${JSON.stringify(m[2])} is a path segment, not a service name` }
  if (q >= 0)
    return { kind: 'bad', message: `POST /${m[1]}/<svc> takes no query: the request names a target, its options are the targets file's` }
  return { kind: 'run', answer: m[1] === 'verify' ? 'status' : 'body', svc: m[2]! }
}
