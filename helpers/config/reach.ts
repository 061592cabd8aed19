// The options that say where the engine runs and how armproof reaches it, read together because
// each depends on the runtime: --runtime, --host (a machine, or under kubernetes a pod),
// --ssh-opts, --kube-opts, --unit, and the commands run there (--ledger-cmd, --help-cmd,
// --pid-cmd) with the placeholders each runtime has. Called by ./load.ts; every problem is
// collected, none thrown.
import type { OptionReader as FullReader } from './sources.ts'
import type { OptionFlag } from './options.ts'
import { ShellWordsError, showValue, splitWords } from './shell.ts'
import {
  RUNTIMES,
  defaultHelpCmd,
  defaultLedgerCmd,
  helpPlaceholders,
  parseKubeOpts,
  parsePodHost,
  templatePlaceholders,
  unitByDefault,
  type PodHost,
  type Runtime,
} from './runtime.ts'

export type HostSpec = { kind: 'local' } | { kind: 'ssh'; user?: string; host: string; port?: number } | PodHost

export interface Reach {
  runtime: Runtime
  host: HostSpec
  sshOpts: string[]
  kubeOpts: string[]
  /** The systemd unit standing for the engine; null: none (a pod; a container or process without --unit). */
  unit: string | null
  ledgerCmd: string
  helpCmd: string
  pidCmd: string | null
}

/** How ./load.ts hands an option's raw value (with where it came from) and takes a problem back (./sources.ts). */
export type OptionReader = Pick<FullReader, 'raw' | 'problem'>

export const USER_RE = /^[a-z_][a-z0-9_-]{0,31}$/
const UNIT_RE = /^[A-Za-z0-9:_.@-]+$/
const HOSTNAME_RE = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/

function parseHost(text: string): HostSpec | string {
  if (text === 'local') return { kind: 'local' }
  const m = /^(?:([^@]+)@)?(\[[0-9A-Fa-f:.]+\]|[^:@[\]]+)(?::(\d{1,5}))?$/.exec(text)
  if (!m) return 'must be "local" or [user@]host[:port]'
  const [, user, rawHost, port] = m
  if (user !== undefined && !USER_RE.test(user)) return `user ${showValue(user)} must match [a-z_][a-z0-9_-]*`
  const host = rawHost!.startsWith('[') ? rawHost!.slice(1, -1) : rawHost!
  if (!rawHost!.startsWith('[') && !HOSTNAME_RE.test(host))
    return `host ${showValue(host)} is not a hostname or IPv4 address${host.includes('/') ? ' (a pod, [namespace/]pod, is --host under --runtime kubernetes)' : ''}`
  if (host.startsWith('-')) return 'host must not start with "-"'
  const portNum = port === undefined ? undefined : Number(port)
  if (portNum !== undefined && (portNum < 1 || portNum > 65535)) return `port ${port} must be 1–65535`
  return { kind: 'ssh', host, ...(user ? { user } : {}), ...(portNum ? { port: portNum } : {}) }
}

function templateProblem(template: string, known: ReadonlySet<string>): string | undefined {
  for (const m of template.matchAll(/\{([^}]*)\}/g)) {
    if (!known.has(m[1]!)) return `unknown placeholder {${m[1]}}; known: ${[...known].map((k) => `{${k}}`).join(', ')}`
  }
  if (template.trim() === '') return 'must not be empty'
  return undefined
}

/** `engineHelp`: how the engine prints its --help (the default help command runs it where the runtime runs the engine). */
export function readReach(read: OptionReader, svc: string, engineHelp?: string): Reach {
  const { raw, problem } = read
  const given = (flag: OptionFlag) => {
    const r = raw(flag)
    return r && r.value !== '' ? r : undefined
  }
  const runtimeRaw = given('runtime')
  let runtime: Runtime = 'podman'
  if (runtimeRaw) {
    if ((RUNTIMES as readonly string[]).includes(runtimeRaw.value)) runtime = runtimeRaw.value as Runtime
    else problem(runtimeRaw, `invalid runtime ${showValue(runtimeRaw.value)}; must be one of: ${RUNTIMES.join(', ')}`)
  }
  const kube = runtime === 'kubernetes'

  const hostRaw = given('host')
  let host: HostSpec = { kind: 'local' }
  if (kube) {
    // A pod, named by --host, else by --svc (a StatefulSet's pods keep their names).
    // `local` is a valid pod name, but here it is a --host meant for another runtime: never taken for a pod.
    const parsed = hostRaw?.value === 'local' ? 'is not a pod' : parsePodHost(hostRaw?.value ?? svc)
    if (typeof parsed !== 'string') host = parsed
    else if (hostRaw)
      problem(
        hostRaw,
        `${showValue(hostRaw.value)} ${parsed}${hostRaw.value === 'local' || hostRaw.value.includes('@') ? '; under --runtime kubernetes --host names the pod, [namespace/]pod' : ''}`,
      )
    else if (svc !== '')
      problem(
        '--host',
        `--runtime kubernetes: --svc ${showValue(svc)} is no pod name (${parsed}); give the pod with --host [namespace/]pod`,
      )
  } else if (hostRaw) {
    const parsed = parseHost(hostRaw.value)
    if (typeof parsed === 'string') problem(hostRaw, `${showValue(hostRaw.value)} ${parsed}`)
    else host = parsed
  }

  let sshOpts: string[] = []
  const sshRaw = given('ssh-opts')
  if (sshRaw && kube)
    problem(sshRaw, 'does not apply under --runtime kubernetes: kubectl reaches the pod (give its options in --kube-opts)')
  else if (sshRaw) {
    try {
      sshOpts = splitWords(sshRaw.value)
    } catch (error) {
      if (!(error instanceof ShellWordsError)) throw error
      problem(sshRaw, `${showValue(sshRaw.value)} cannot be split: ${error.message}`)
    }
  }

  let kubeOpts: string[] = []
  const kubeRaw = given('kube-opts')
  if (kubeRaw && !kube) problem(kubeRaw, 'only applies under --runtime kubernetes')
  else if (kubeRaw) {
    const parsed = parseKubeOpts(kubeRaw.value)
    if ('problems' in parsed) for (const p of parsed.problems) problem(kubeRaw, p)
    else kubeOpts = parsed.opts
  }

  const unitRaw = given('unit')
  let unit: string | null = unitByDefault(runtime) ? svc : null
  if (unitRaw && kube)
    problem(unitRaw, 'does not apply under --runtime kubernetes: a pod has no systemd unit (the drop-in gate is skipped, with why)')
  else if (unitRaw) {
    const resolved = unitRaw.value.replaceAll('{svc}', svc)
    if (UNIT_RE.test(resolved) && !resolved.startsWith('-')) unit = resolved
    else problem(unitRaw, `${showValue(unitRaw.value)} must be a unit name of [A-Za-z0-9:_.@-] (may use {svc})`)
  }

  const known = templatePlaceholders(runtime)
  const template = (flag: 'ledger-cmd' | 'help-cmd' | 'pid-cmd', fallback: string | null, more: readonly string[] = []): string | null => {
    const r = given(flag)
    if (!r) return fallback
    const why =
      templateProblem(r.value, more.length ? templatePlaceholders(runtime, more) : known) ??
      (unit === null && r.value.includes('{unit}')
        ? `uses {unit}, but no unit stands for the engine under --runtime ${runtime}: give --unit`
        : undefined)
    if (why) problem(r, `${showValue(r.value)} ${why}`)
    return why ? fallback : r.value
  }
  // A bare process's boot log: its unit's journal, or wherever the operator says.
  const ledgerFallback = runtime === 'process' && unit === null ? null : defaultLedgerCmd(runtime)
  const ledgerCmd = template('ledger-cmd', ledgerFallback)
  if (ledgerCmd === null && !given('ledger-cmd'))
    problem(
      '--ledger-cmd',
      "--runtime process: give --ledger-cmd (the command printing the engine's boot log) or --unit (its journal is read with journalctl -u <unit>)",
    )
  const helpCmd = template('help-cmd', defaultHelpCmd(runtime, engineHelp), helpPlaceholders(runtime)) as string
  // --pid-cmd may also name the base URL's port.
  const pidCmd = template('pid-cmd', null, ['port'])
  return { runtime, host, sshOpts, kubeOpts, unit, ledgerCmd: ledgerCmd ?? '', helpCmd, pidCmd }
}
