// An emulated engine's process (`node engine/radiance.ts --profile vllm serve …`, or the
// launcher's RADIANCE_REF_PROFILE): parse its command line as that engine does (help, version and
// errors exit as it does), print its startup log, keep the port closed, then answer 503 while
// loading if the engine does, then serve. Faults come from RADIANCE_REF_FAULTS.
import { FAULTS_ENV, LOAD_ENV, STANDBY_ENV } from './env.ts'
import { markBooted, watchParent } from './parent.ts'
import { buildProfileServer } from './profile-server.ts'
import { faultsOf, isProfileFaultName } from './profiles/faults.ts'
import type { ProfileFaultName } from './profiles/faults.ts'
import { PROFILES } from './profiles/index.ts'
import { isProfileName } from './profiles/types.ts'
import { loadYaml } from './profiles/yaml.ts'
import type { EmulatedProfile } from './profiles/types.ts'

const write = (lines: readonly string[]): void => {
  if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`)
}

function refuse(message: string): never {
  process.stderr.write(`radiance reference engine: ${message}\n`)
  process.exit(2)
}

/** The faults in RADIANCE_REF_FAULTS, each one of this profile's. */
export function profileFaults(profile: EmulatedProfile, raw: string | undefined): Set<ProfileFaultName> {
  const names = (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  const mine = faultsOf(profile)
  const bad = names.filter((n) => !isProfileFaultName(n) || !mine.includes(n))
  if (bad.length > 0) refuse(`${FAULTS_ENV}: ${bad.join(', ')} is not a fault of the ${profile} profile (one of: ${mine.join(', ')})`)
  return new Set(names as ProfileFaultName[])
}

function loadTimes(profile: EmulatedProfile): { closedMs: number; unavailableMs: number } {
  const raw = process.env[LOAD_ENV]
  if (raw === undefined) return PROFILES[profile].load
  const m = /^(\d+),(\d+)$/.exec(raw)
  if (!m) refuse(`${LOAD_ENV} must be CLOSED_MS,UNAVAILABLE_MS (two ints), got ${JSON.stringify(raw)}`)
  return { closedMs: Number(m[1]), unavailableMs: Number(m[2]) }
}

export async function runProfile(name: string, argv: readonly string[]): Promise<void> {
  if (!isProfileName(name) || name === 'radiance')
    refuse(`unknown profile ${JSON.stringify(name)} (one of: vllm, sglang, llama.cpp; radiance is the default)`)
  const profile = name as EmulatedProfile
  const faults = profileFaults(profile, process.env[FAULTS_ENV])
  // vLLM reads the YAML file after the word `--config` (./profiles/vllm-args.ts).
  if (argv.includes('--config')) await loadYaml()
  const started = PROFILES[profile].start(argv, process.env, faults, process.pid)
  if (started.kind === 'exit') {
    process.stdout.write(started.stdout)
    process.stderr.write(started.stderr)
    process.exit(started.code)
  }
  const { engine } = started
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0))
  watchParent()
  write(engine.bootLines(new Date()))
  markBooted()
  if (process.env[STANDBY_ENV] === '1') {
    setInterval(() => {}, 1 << 30)
    return
  }
  const { closedMs, unavailableMs } = loadTimes(profile)
  let listenedAt = Number.POSITIVE_INFINITY
  let boundPort = engine.port
  const server = buildProfileServer(
    engine,
    () => listenedAt,
    unavailableMs,
    write,
    () => boundPort,
  )
  server.on('error', (error: NodeJS.ErrnoException) => {
    process.stderr.write(`cannot listen on ${engine.host}:${engine.port}: ${error.code ?? error.message}\n`)
    process.exit(1)
  })
  setTimeout(() => {
    // Loopback only, whatever the host flag says: the reference engine is a test double.
    server.listen(engine.port, '127.0.0.1', () => {
      listenedAt = Date.now()
      const address = server.address()
      boundPort = typeof address === 'object' && address ? address.port : engine.port
      write(engine.listeningLines(new Date(), boundPort))
      setTimeout(() => server.loadEnded(), unavailableMs)
    })
  }, closedMs)
}
