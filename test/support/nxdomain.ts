// Loaded with NODE_OPTIONS=--import into a verify run: a name under `.invalid` (RFC 6761: never
// resolves) answers ENOTFOUND here, at once, as a resolver's NXDOMAIN would, without asking the
// machine's resolver (tests talk to loopback only). Every other name resolves as usual.
import dns from 'node:dns'

const lookup = dns.lookup
dns.lookup = function nxdomain(hostname: string, ...rest: unknown[]) {
  if (typeof hostname === 'string' && /\.invalid\.?$/i.test(hostname)) {
    const callback = rest.at(-1) as (error: NodeJS.ErrnoException) => void
    const error: NodeJS.ErrnoException = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
      code: 'ENOTFOUND',
      errno: -3008,
      syscall: 'getaddrinfo',
      hostname,
    })
    process.nextTick(() => callback(error))
    return undefined as unknown as ReturnType<typeof lookup>
  }
  return (lookup as (...a: unknown[]) => unknown)(hostname, ...rest)
} as typeof lookup
