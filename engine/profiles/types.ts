// What a non-radiance profile of the reference engine is to the server that hosts it
// (engine/profile-server.ts): its boot and listening log lines, its own endpoints (health,
// self-description, metrics), and the meters a finished completion moves.
export const PROFILE_NAMES = ['radiance', 'vllm', 'sglang', 'llama.cpp'] as const
export type ProfileName = (typeof PROFILE_NAMES)[number]
/** The profiles that are not radiance: each emulates one real engine. */
export type EmulatedProfile = Exclude<ProfileName, 'radiance'>

export function isProfileName(name: string): name is ProfileName {
  return (PROFILE_NAMES as readonly string[]).includes(name)
}

/** One finished chat completion, as the meters see it. */
export interface Served {
  /** The prompt's tokens (the words of its messages, in order): what a prefix cache matches. */
  tokens: readonly string[]
  completionTokens: number
  finishReason: 'stop' | 'length' | 'tool_calls' | 'abort'
  ttftS: number
  e2eS: number
}

export interface Request {
  method: string
  path: string
  query: URLSearchParams
}

export interface Reply {
  status: number
  headers?: Record<string, string>
  body: string
}

export const json = (status: number, body: unknown, headers: Record<string, string> = {}): Reply => ({
  status,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
})

export interface ProfileEngine {
  readonly profile: EmulatedProfile
  readonly host: string
  readonly port: number
  /** The names /v1/models lists; the first is the one replies and metric labels carry. */
  readonly servedNames: readonly string[]
  readonly apiKey: string | null
  /** The reply to a /v1 request without the right bearer token. */
  unauthorized(): Reply
  /** Lines printed before the port opens (the startup log). */
  bootLines(now: Date): string[]
  /** Lines printed once the port is open. */
  listeningLines(now: Date, port: number): string[]
  /** Lines printed when loading ends (the 503 phase is over): llama.cpp prints what it resolved then. */
  loadedLines?(now: Date, port: number): string[]
  /** The profile's own answer (health, self-description, metrics, 404s), or null: the common /v1 routes answer. */
  answer(req: Request, loading: boolean): (Reply & { log?: string[] }) | null
  /**
   * The engine's own refusal of a chat request before the model sees it (vLLM's 400s, llama.cpp's
   * 500 for an image without --mmproj), with the log lines it prints (`promptTokens`: the prompt as
   * the model counts it); null: served.
   */
  refuse?(body: Record<string, unknown>, promptTokens: number): (Reply & { log?: string[] }) | null
  /** The reply's fields as this engine writes them (the common model's reply in, the engine's out). */
  reply?(response: Record<string, unknown>): Record<string, unknown>
  /** Books one finished completion; returns the log lines the engine prints for it. */
  record(served: Served, now: Date): string[]
  /** A request started (+1) or ended (-1): what the running gauges show. */
  running(delta: 1 | -1): void
  /** The body of GET /v1/models. */
  modelList(): unknown
  /** /stats: what the test reads back. */
  stats(): Record<string, unknown>
}

/** What parsing a profile's command line led to: an engine to serve, or an exit (help, version, error). */
export type Start = { kind: 'engine'; engine: ProfileEngine } | { kind: 'exit'; code: number; stdout: string; stderr: string }
