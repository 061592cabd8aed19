// An emulated engine (a profile of engine/profiles/) served in this process: the same start and
// server a launched one runs (engine/profile-main.ts), without its process, its log file or its
// load phases. What it would print goes to `log`. For tests of what the engine answers over HTTP;
// anything that needs the process or its shims launches it (engine/launch.ts startEngine).
import { buildProfileServer } from '../../engine/profile-server.ts'
import type { ProfileFaultName } from '../../engine/profiles/faults.ts'
import { PROFILES } from '../../engine/profiles/index.ts'
import type { EmulatedProfile, ProfileEngine } from '../../engine/profiles/types.ts'
import { listenOnLoopback } from './engine-in-process.ts'

export interface InProcessProfile {
  baseUrl: string
  engine: ProfileEngine
  /** Every line the engine printed: its boot lines, then what it printed while serving. */
  log: string[]
  stop(): Promise<void>
}

/** Starts `argv` as `profile` does (rejects when it would exit instead) and serves it on a free loopback port. */
export async function serveProfile(
  profile: EmulatedProfile,
  argv: readonly string[],
  options: { faults?: ProfileFaultName[]; env?: NodeJS.ProcessEnv; unavailableMs?: number } = {},
): Promise<InProcessProfile> {
  const started = PROFILES[profile].start(argv, options.env ?? {}, new Set(options.faults ?? []), process.pid)
  if (started.kind === 'exit')
    throw new Error(`serveProfile: ${profile} exits ${started.code} on ${argv.join(' ')}: ${started.stderr || started.stdout}`)
  const { engine } = started
  const log = engine.bootLines(new Date())
  let listenedAt = Number.POSITIVE_INFINITY
  let port = engine.port
  const server = buildProfileServer(
    engine,
    () => listenedAt,
    options.unavailableMs ?? 0,
    (lines) => log.push(...lines),
    () => port,
  )
  const served = await listenOnLoopback(server)
  port = served.port
  listenedAt = Date.now()
  log.push(...engine.listeningLines(new Date(), served.port))
  if ((options.unavailableMs ?? 0) > 0) setTimeout(() => server.loadEnded(), options.unavailableMs).unref()
  else server.loadEnded()
  return { baseUrl: served.baseUrl, engine, log, stop: served.stop }
}

/** What the engine's process would do with `argv`: exit with this code and output, or serve (null). */
export function exitOf(
  profile: EmulatedProfile,
  argv: readonly string[],
  env: NodeJS.ProcessEnv = {},
): { code: number; stdout: string; stderr: string } | null {
  const started = PROFILES[profile].start(argv, env, new Set(), process.pid)
  return started.kind === 'exit' ? { code: started.code, stdout: started.stdout, stderr: started.stderr } : null
}

/** `words` distinct tokens: a prompt of exactly that many prompt tokens for the reference model. */
export const tokens = (n: number, tag = 'w'): string => Array.from({ length: n }, (_, i) => `${tag}${i}`).join(' ')

export async function complete(baseUrl: string, content: string, model?: string): Promise<{ status: number; json: any }> {
  const res = await fetch(`${baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...(model ? { model } : {}), max_tokens: 256, messages: [{ role: 'user', content }] }),
    signal: AbortSignal.timeout(5000),
  })
  const text = await res.text()
  return { status: res.status, json: text ? JSON.parse(text) : null }
}
