// Starts reference engines for tests and for the demo: each in its own temp root, under its own
// process name (so `pidof` finds it), with its stdout teed to a ledger file and host shims
// (`podman`, `systemctl`, and the engine's --help text they print) generated next to it.
// `node engine/launch.ts --help` for the CLI.
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { FLEET_ENV, PARENT_ENV, PROFILE_ENV, ROOT_ENV, STANDBY_ENV, bootedMarker } from './env.ts'
import { fleetMembers, fleetSvcPattern, type FleetMember } from './fleet.ts'
import { isFaultName } from './faults.ts'
import type { FaultName } from './faults.ts'
import { helpText } from './help.ts'
import { alive, freePort, releasePort, spawned } from './proc.ts'
import { helpAnswers, profilePlan, RADIANCE_IMAGE } from './profile-launch.ts'
import type { ProfileName } from './profile-launch.ts'
import type { ProfileFaultName } from './profiles/faults.ts'
import type { EmulatedProfile } from './profiles/types.ts'
import { writeRuntimeShims } from './runtime-shims.ts'
import { imageId, type RuntimeFaultName } from './runtime-objects.ts'
import { writeShims } from './shims.ts'

export { freePort }

/** radiance.ts in the checkout, radiance.js in the built package (dist/, see tsconfig.build.json). */
export const ENGINE_ENTRY = fileURLToPath(new URL(`./radiance.${import.meta.url.endsWith('.js') ? 'js' : 'ts'}`, import.meta.url))
/** Node's compile cache (it keeps the type-stripped modules too): halves an engine's boot time. */
export const COMPILE_CACHE = join(tmpdir(), 'radiance-ref-compile-cache')

export interface EngineOptions {
  /** Container/unit name the host shims answer for; default 'radiance-ref'. */
  svc?: string
  /** The engine's argv[0] basename, so `pidof <processName>` finds it; default 'radiance'; ≤ 15 chars. */
  processName?: string
  /** radiance flags, e.g. ['--prefill-interleave', '1']. */
  args?: readonly string[]
  /** Fault names: radiance's are passed as `--fault X`; an emulated profile's (engine/profiles/faults.ts) in its env. */
  faults?: readonly (FaultName | ProfileFaultName)[]
  /** Which engine the reference engine speaks (engine/profiles/); default 'radiance'. Sets the default svc and process name. */
  profile?: ProfileName
  /** Extra env for the engine process (e.g. LLAMA_ARG_N_PARALLEL, VLLM_SERVER_DEV_MODE). */
  engineEnv?: Readonly<Record<string, string>>
  /** An emulated profile's load: the port closed this long, then 503 this long (default: the profile's). */
  load?: { closedMs: number; unavailableMs: number }
  /** The Kubernetes namespace the kubectl shim puts the pod in; default 'default'. */
  namespace?: string
  /** What the runtime around the engine gets wrong (engine/runtime-objects.ts RUNTIME_FAULTS): a stopped container, a refused kubectl. */
  runtimeFaults?: readonly RuntimeFaultName[]
  /** How many identical engine processes to start (2 = the "two engine processes" fault); only the first listens. */
  copies?: number
  /** What `systemctl show <unit> -p DropInPaths` reports; default none. */
  dropins?: readonly string[]
  /** Default: a free port on 127.0.0.1. */
  port?: number
  /**
   * The engine stands for the main process of container `svc`: the podman shim's
   * `inspect --format '{{.State.Pid}}' <svc>` prints its pid. Default: it answers "no such object".
   */
  container?: boolean
  /** The node binary the engine's link points at (a copy of this one: another binary, for the one-flag law's tests); default this process's. */
  executable?: string
  /** The image the container runs, as the runtime names it (its id is what `inspect` and the pod report); default the profile's. */
  image?: string
  /** Files written into the engine's working folder before it starts (e.g. `serve.yaml` for `--config serve.yaml`). */
  files?: Readonly<Record<string, string>>
  /** This one process serves that many engines, each on its own port (engine/fleet-main.ts); the shims answer for `<svc>-0` … `<svc>-<n-1>`. */
  fleet?: number
  /**
   * The engine runs as a script named `processName` that node runs, as a pip-installed vLLM is
   * `…/bin/python3 …/bin/vllm serve …` (argv[0] the interpreter, argv[1] the script, no process
   * whose argv[0] or exe bears the name): `shebang`, its first line names node's path, so the
   * kernel names the process after the script (pip writes its scripts so); `env`, through
   * `#!/usr/bin/env node`, so the process is named node. The script picks the profile itself, so
   * `<node> <script> … --help` prints that engine's help, as the real one's does. Default: node
   * started through a link named `processName`, the entry its argv[1].
   */
  script?: 'shebang' | 'env'
}

export interface EngineHandle {
  profile: ProfileName
  baseUrl: string
  port: number
  svc: string
  processName: string
  pids: number[]
  /** The temp dir of this engine (ledger log, shims); removed by stop(). */
  root: string
  /** Holds the `podman` and `systemctl` shims: put it first on PATH for host commands. */
  binDir: string
  /** `{ PATH: binDir:$PATH }`, the env for host commands. */
  env: Record<string, string>
  /** The file the first engine's stdout and stderr go to (what `podman logs <svc>` prints). */
  ledgerPath: string
  /** The engines' working folder (where `files` were written). */
  cwd: string
  /** With `fleet`: the engines this process serves, each its own service name and port. */
  members?: FleetMember[]
  stats(): Promise<unknown>
  /** Polls /health until 200; rejects on timeout or when the engine exited. */
  waitReady(timeoutMs?: number): Promise<void>
  /** SIGTERM, then SIGKILL after 2 s, for every copy; removes root. Idempotent. */
  stop(): Promise<void>
}

const live = new Set<ChildProcess>()
const roots = new Set<string>()
let exitHookInstalled = false

function installExitHook(): void {
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.on('exit', () => {
    for (const child of live) child.kill('SIGKILL')
    for (const root of roots) rmSync(root, { recursive: true, force: true })
  })
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

function validate(svc: string, processName: string, copies: number, faults: readonly string[], args: readonly string[]): void {
  if (!/^[A-Za-z0-9_.-]+$/.test(svc)) throw new Error(`startEngine: svc must match [A-Za-z0-9_.-]+, got ${JSON.stringify(svc)}`)
  if (!/^[A-Za-z0-9_.-]{1,15}$/.test(processName)) {
    throw new Error(
      `startEngine: processName must be 1..15 chars of [A-Za-z0-9_.-] (pidof matches argv[0]), got ${JSON.stringify(processName)}`,
    )
  }
  if (!Number.isInteger(copies) || copies < 1 || copies > 8) throw new Error(`startEngine: copies must be an int in 1..8, got ${copies}`)
  for (const f of faults) if (!isFaultName(f)) throw new Error(`startEngine: unknown fault ${JSON.stringify(f)}`)
  if (args.some((a) => a === '--port' || a.startsWith('--port=')))
    throw new Error('startEngine: pass the port as options.port, not in args')
}

/**
 * Until the first engine has written its boot output (its ledger) to the log, or has exited, at
 * most 30 s (a loaded machine starts node slowly): a proof started right after startEngine()
 * reads the ledger the engine printed, not a log it is still writing. Its port may still be closed.
 */
async function bootPrinted(child: ChildProcess, root: string): Promise<void> {
  const marker = join(root, bootedMarker(child.pid!))
  const deadline = Date.now() + 30_000
  while (alive(child) && !existsSync(marker) && Date.now() < deadline) await sleep(15)
}

/** radiance's `--help` and `-h`: the file written at launch. */
const radianceHelps = (path: string): Array<{ argv: readonly string[]; path: string }> => [
  { argv: ['--help'], path },
  { argv: ['-h'], path },
]

/** An emulated engine's help command lines (engine/profile-launch.ts helpAnswers), each answer written once to a file of `root`. */
function profileHelps(
  root: string,
  profile: EmulatedProfile,
  env: Readonly<Record<string, string>>,
  faults: readonly string[],
): Array<{ argv: readonly string[]; path: string }> {
  const files = new Map<string, string>()
  return helpAnswers(profile, env, faults).map(({ argv, stdout }) => {
    let path = files.get(stdout)
    if (path === undefined) {
      path = join(root, `help-${files.size}.txt`)
      writeFileSync(path, stdout)
      files.set(stdout, path)
    }
    return { argv, path }
  })
}

/** The script of `EngineOptions.script`: CommonJS (an extensionless file), which sets the profile and imports the entry. */
function engineScript(kind: 'shebang' | 'env', profile: ProfileName): string {
  return [
    kind === 'env' ? '#!/usr/bin/env node' : `#!${process.execPath}`,
    `// The reference engine speaking ${profile}, run as a script (written by engine/launch.ts).`,
    `process.env.${PROFILE_ENV} ??= ${JSON.stringify(profile)}`,
    `import(${JSON.stringify(pathToFileURL(ENGINE_ENTRY).href)})`,
    '',
  ].join('\n')
}

export async function startEngine(options: EngineOptions = {}): Promise<EngineHandle> {
  const profile = options.profile ?? 'radiance'
  const plan = profile === 'radiance' ? null : profilePlan(profile, options.args ?? [], options.faults ?? [], options.load)
  const svc = options.svc ?? plan?.svc ?? 'radiance-ref'
  const processName = options.processName ?? plan?.processName ?? 'radiance'
  const copies = options.copies ?? 1
  const faults = (plan ? [] : (options.faults ?? [])) as readonly FaultName[]
  const userArgs = options.args ?? []
  validate(svc, processName, copies, faults, userArgs)
  installExitHook()
  const port = options.port ?? (await freePort())
  const root = mkdtempSync(join(tmpdir(), 'radiance-ref-'))
  roots.add(root)
  const binDir = join(root, 'bin')
  const engineDir = join(root, 'bin-engine')
  mkdirSync(binDir)
  mkdirSync(engineDir)
  const enginePath = join(engineDir, processName)
  if (options.script) writeFileSync(enginePath, engineScript(options.script, profile), { mode: 0o755 })
  else symlinkSync(options.executable ?? process.execPath, enginePath)
  const ledgerPath = join(root, 'ledger.log')
  // A fleet's members listen on ports of their own choosing (engine/fleet-main.ts): no --port.
  const engineArgs = plan ? plan.argv(port) : options.fleet ? [...userArgs] : ['--port', String(port), ...userArgs]
  const argv = [...(options.script ? [] : [ENGINE_ENTRY]), ...engineArgs, ...faults.flatMap((f) => ['--fault', f])]
  // What `radiance --fault … --help` prints (and exit 0), computed here once: the shim prints it without a node start.
  const helpPath = join(root, 'radiance-help.txt')
  writeFileSync(helpPath, helpText(new Set(faults)))
  const containerPidPath = options.container ? join(root, 'container.pid') : null
  writeShims({
    binDir,
    svc: options.fleet ? fleetSvcPattern(svc) : svc,
    ledgerPath,
    nodePath: process.execPath,
    entry: ENGINE_ENTRY,
    faults,
    helpPath,
    dropins: options.dropins ?? [],
    containerPidPath,
    imageId: imageId(options.image ?? plan?.image ?? RADIANCE_IMAGE),
    compileCache: COMPILE_CACHE,
  })
  // The engines' working folder: the launcher's own, unless files are given for them to read.
  const cwd = options.files ? join(root, 'work') : process.cwd()
  if (options.files) {
    mkdirSync(cwd)
    for (const [name, text] of Object.entries(options.files)) {
      if (!/^[A-Za-z0-9_.-]+$/.test(name)) throw new Error(`startEngine: file names are plain names, got ${JSON.stringify(name)}`)
      writeFileSync(join(cwd, name), text)
    }
  }
  const { NODE_OPTIONS: _dropped, ...inherited } = process.env
  const baseEnv: NodeJS.ProcessEnv = { NODE_COMPILE_CACHE: COMPILE_CACHE, ...inherited }
  const children: ChildProcess[] = []
  for (let i = 0; i < copies; i++) {
    const fd = openSync(i === 0 ? ledgerPath : join(root, `copy-${i + 1}.log`), 'a')
    const env: NodeJS.ProcessEnv = {
      ...baseEnv,
      ...options.engineEnv,
      ...plan?.env,
      [PARENT_ENV]: String(process.pid),
      [ROOT_ENV]: root,
      ...(i > 0 ? { [STANDBY_ENV]: '1' } : {}),
      ...(options.fleet ? { [FLEET_ENV]: String(options.fleet) } : {}),
      // `#!/usr/bin/env node` finds this node first.
      ...(options.script === 'env' ? { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? '/usr/bin:/bin'}` } : {}),
    }
    const child = spawn(enginePath, argv, { stdio: ['ignore', fd, fd], env, cwd })
    closeSync(fd)
    live.add(child)
    child.once('exit', () => live.delete(child))
    child.on('error', () => {}) // a failed kill() must not crash the test runner; spawn errors are awaited below
    children.push(child)
    try {
      await spawned(child)
    } catch (error) {
      for (const c of children) c.kill('SIGKILL')
      rmSync(root, { recursive: true, force: true })
      roots.delete(root)
      throw new Error(`startEngine: cannot spawn ${enginePath}: ${(error as Error).message}`)
    }
  }
  const containerEnv = { ...options.engineEnv, ...plan?.env }
  writeRuntimeShims({
    binDir,
    ledgerPath,
    nodePath: process.execPath,
    entry: ENGINE_ENTRY,
    engineEnv: containerEnv,
    engineLead: faults.flatMap((f) => ['--fault', f]),
    helps: plan ? profileHelps(root, profile as EmulatedProfile, containerEnv, options.faults ?? []) : radianceHelps(helpPath),
    compileCache: COMPILE_CACHE,
    podman: plan !== null,
    facts: {
      svc,
      namespace: options.namespace ?? 'default',
      binary: plan?.binary ?? 'radiance',
      image: options.image ?? plan?.image ?? RADIANCE_IMAGE,
      args: engineArgs,
      env: containerEnv,
      pid: children[0]!.pid!,
      port,
      startedAt: new Date(),
      faults: options.runtimeFaults ?? [],
    },
  })
  // A stopped container (runtimeFaults container_stopped): podman inspect's State.Pid is 0.
  if (containerPidPath) writeFileSync(containerPidPath, `${options.runtimeFaults?.includes('container_stopped') ? 0 : children[0]!.pid}\n`)
  await bootPrinted(children[0]!, root)
  const members = options.fleet ? await fleetMembers(children[0]!, root, svc, options.fleet) : undefined
  const baseUrl = members ? members[0]!.baseUrl : `http://127.0.0.1:${port}`
  const exited = (c: ChildProcess): Promise<unknown> => (alive(c) ? once(c, 'exit') : Promise.resolve())
  let stopping: Promise<void> | null = null
  const handle: EngineHandle = {
    profile,
    baseUrl,
    port,
    svc,
    processName,
    pids: children.map((c) => c.pid!),
    root,
    binDir,
    env: { PATH: `${binDir}:${process.env.PATH ?? '/usr/bin:/bin'}` },
    ledgerPath,
    cwd,
    ...(members ? { members } : {}),
    async stats() {
      const res = await fetch(`${baseUrl}/stats`, { signal: AbortSignal.timeout(5000) })
      return res.json()
    },
    async waitReady(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs
      const first = children[0]!
      while (Date.now() < deadline) {
        if (!alive(first)) {
          const tail = readFileSync(ledgerPath, 'utf8').split('\n').slice(-10).join('\n')
          throw new Error(
            `engine ${processName} (pid ${first.pid}) exited with ${first.exitCode ?? first.signalCode} before /health was ready:\n${tail}`,
          )
        }
        try {
          const res = await fetch(`${baseUrl}/health`, { redirect: 'manual', signal: AbortSignal.timeout(500) })
          await res.arrayBuffer()
          if (res.status === 200) return
          const location = res.headers.get('location')
          if (res.status >= 300 && res.status < 400 && location !== null) {
            // A Location that is no URL (health_bad_location): the engine is up, answering its broken redirect.
            if (!URL.canParse(location, baseUrl)) return
            const next = await fetch(new URL(location, baseUrl), { signal: AbortSignal.timeout(500) })
            await next.arrayBuffer()
            if (next.status === 200) return
          }
        } catch {
          // closed port or hung answer: still loading
        }
        await sleep(40)
      }
      throw new Error(`engine ${processName} at ${baseUrl}: /health not 200 within ${timeoutMs} ms`)
    },
    stop() {
      stopping ??= (async () => {
        for (const c of children) if (alive(c)) c.kill('SIGTERM')
        await Promise.race([Promise.all(children.map(exited)), sleep(2000)])
        for (const c of children) if (alive(c)) c.kill('SIGKILL')
        await Promise.race([Promise.all(children.map(exited)), sleep(2000)])
        rmSync(root, { recursive: true, force: true })
        roots.delete(root)
        releasePort(port)
      })()
      return stopping
    },
  }
  return handle
}

if (import.meta.main) {
  const { runDemo } = await import('./demo.ts')
  await runDemo(process.argv.slice(2), startEngine)
}
