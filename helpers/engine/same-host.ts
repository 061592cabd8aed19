// Whether the base URL names the host armproof inspects, and which listening sockets it can reach.
// Decided from the text alone (no DNS), so a replay decides as the recorded run did.
import { isIP } from 'node:net'
import type { HostSpec } from '../config/load.ts'
import type { Listener } from './proc.ts'

/** A URL's hostname without IPv6 brackets, lower-cased. */
export function bareHost(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '').toLowerCase()
}

/** 127.0.0.0/8, ::1, ::ffff:127.x, `localhost` and names under it. */
export function isLoopback(host: string): boolean {
  const h = bareHost(host)
  if (h === 'localhost' || h.endsWith('.localhost')) return true
  if (h === '::1') return true
  const v4 = h.startsWith('::ffff:') ? h.slice(7) : h
  return isIP(v4) === 4 && v4.startsWith('127.')
}

/**
 * The URL's host is the host inspected: loopback with `--host local`; over ssh, the very name
 * or address `--host` gives (or both loopback). A name that may point elsewhere is not assumed
 * to be this host; nor is any URL a pod's, read through kubectl (loopback here is a
 * port-forward's socket, never the pod's, and a Service's name is many pods').
 */
export function urlIsThisHost(urlHost: string | null, host: HostSpec): boolean {
  if (urlHost === null || host.kind === 'pod') return false
  if (host.kind === 'local') return isLoopback(urlHost)
  const a = bareHost(urlHost)
  const b = bareHost(host.host)
  return a === b || (isLoopback(a) && isLoopback(b))
}

const strip4 = (a: string): string => (a.startsWith('::ffff:') && isIP(a.slice(7)) === 4 ? a.slice(7) : a)

/**
 * Whether a connection to `urlHost` can land on this listening socket: a wildcard bind takes
 * its family (`::` both), an address only itself; loopback names reach loopback binds. A host
 * name that is no address (and not loopback) may be any of the host's addresses.
 */
export function reaches(listener: Listener, urlHost: string | null): boolean {
  const bound = strip4(listener.address)
  const wildcard = bound === '0.0.0.0' || bound === '::'
  if (urlHost === null) return wildcard
  const h = strip4(bareHost(urlHost))
  const family = isIP(h)
  if (wildcard) return family === 0 || bound === '::' || family === 4
  if (family !== 0) return h === bound
  if (isLoopback(h)) return isLoopback(bound)
  return !isLoopback(bound)
}
