// How the host runs the engine (`--runtime`): `podman` (rootless, under systemd: the defaults
// armproof was born with), `docker`, `kubernetes` (`--host [namespace/]pod`, reached with kubectl
// and `--kube-opts`) or `process` (a bare process). Decided here, before contact: the default
// commands for the ledger and --help, whether a systemd unit (and so the drop-in gate) applies,
// and every value that reaches a shell: pod and namespace names by Kubernetes' DNS-1123 rules,
// kubectl's options one by one. The lookup's own runtime step is helpers/engine/runtime.ts.
import { ShellWordsError, showValue, splitWords } from './shell.ts'

export const RUNTIMES = ['podman', 'docker', 'kubernetes', 'process'] as const
export type Runtime = (typeof RUNTIMES)[number]

/** A pod as `--host` names it under `--runtime kubernetes`; no namespace: kubectl's context's. */
export interface PodHost {
  kind: 'pod'
  pod: string
  namespace?: string
}

/** Lines of the boot log the default ledger commands read, from the end (the latest boot is last). */
export const LEDGER_TAIL_LINES = 100_000

/** The engine's own --help, as the default help commands run it (in the container, the pod or on the host). */
const ENGINE_HELP = 'radiance --help'

/**
 * `{engine}` in a help command: the program the engine process runs, read from its /proc
 * (helpers/engine/binary.ts: its exe, or its interpreter and script), so a bare process's --help
 * is its own build's and never that of whatever is first on PATH.
 */
export const ENGINE_PLACEHOLDER = '{engine}'

/** The profile's help command with its program replaced by `{engine}`: `vllm serve --help=all` → `{engine} serve --help=all`. */
export function engineHelpCmd(engineHelp: string): string {
  return engineHelp.trim().replace(/^\S+/, ENGINE_PLACEHOLDER)
}

/** What each runtime reads by default. `{unit}` only where a unit is given (a bare process's ledger). */
const DEFAULTS: Readonly<Record<Runtime, { ledger: string; help: (engineHelp: string) => string }>> = {
  podman: { ledger: `podman logs --tail ${LEDGER_TAIL_LINES} {svc}`, help: (h) => `podman exec {svc} ${h}` },
  docker: { ledger: `docker logs --tail ${LEDGER_TAIL_LINES} {svc}`, help: (h) => `docker exec {svc} ${h}` },
  // {container}: `-c <the container declaring the base URL's port>` in a pod of several (a sidecar may be kubectl's default), else nothing.
  kubernetes: {
    ledger: `kubectl logs {kube} {container} --tail ${LEDGER_TAIL_LINES} {pod}`,
    help: (h) => `kubectl exec {kube} {pod} {container} -- ${h}`,
  },
  process: { ledger: `journalctl -u {unit} -o cat --no-pager -n ${LEDGER_TAIL_LINES}`, help: engineHelpCmd },
}

/** The default `--ledger-cmd` of a runtime (a bare process's needs a `--unit`: journalctl reads the unit's journal). */
export function defaultLedgerCmd(runtime: Runtime): string {
  return DEFAULTS[runtime].ledger
}

/** The default `--help-cmd` of a runtime; `engineHelp` is how the engine prints its help (a profile may say otherwise). */
export function defaultHelpCmd(runtime: Runtime, engineHelp: string = ENGINE_HELP): string {
  return DEFAULTS[runtime].help(engineHelp)
}

/** The placeholders a help command may use besides the others: `{engine}` under a bare process (a container's binary is its image's, run by its exec). */
export function helpPlaceholders(runtime: Runtime): string[] {
  return runtime === 'process' ? ['engine'] : []
}

/** The placeholders an operator's command template may use under a runtime. */
export function templatePlaceholders(runtime: Runtime, extra: readonly string[] = []): ReadonlySet<string> {
  return new Set(['svc', 'unit', ...(runtime === 'kubernetes' ? ['pod', 'kube', 'container'] : []), ...extra])
}

/** Whether a systemd unit stands for the engine by default: podman's quadlet / unit is named after the service; a docker container, a pod and a bare process are no unit unless `--unit` says so. */
export function unitByDefault(runtime: Runtime): boolean {
  return runtime === 'podman'
}

/** Why the drop-in gate does not apply to this run (no unit), for the step's `observed`; the next step to take by hand. */
export function noUnitReason(runtime: Runtime): { why: string; next: string } {
  if (runtime === 'kubernetes')
    return {
      why: 'a Kubernetes pod has no systemd unit: what overrides its env is in its spec',
      next: "read what the pod runs with instead: kubectl get pod <pod> -o yaml (env, args, the owner's spec)",
    }
  if (runtime === 'docker')
    return {
      why: 'a docker container is not a systemd unit (no --unit was given)',
      next: 'give --unit <unit> when a systemd unit starts the container, to check its drop-ins',
    }
  return {
    why: 'a bare process without a unit (no --unit was given)',
    next: 'give --unit <unit> when a systemd unit starts the process, to check its drop-ins',
  }
}

// Kubernetes' names (k8s.io/apimachinery validation): a pod's name is a DNS-1123 subdomain, a
// namespace a DNS-1123 label. Nothing else reaches kubectl's argv.
const DNS1123_LABEL = /^[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?$/
const DNS1123_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/

/** `[namespace/]pod`, or why not. */
export function parsePodHost(text: string): PodHost | string {
  const parts = text.split('/')
  if (parts.length > 2) return 'must be [namespace/]pod (one "/" at most)'
  const [namespace, pod] = parts.length === 2 ? [parts[0]!, parts[1]!] : [undefined, parts[0]!]
  if (namespace !== undefined && !DNS1123_LABEL.test(namespace))
    return `namespace ${showValue(namespace)} is not a DNS-1123 label (lowercase letters, digits and "-", starting and ending with a letter or digit, at most 63 characters)`
  if (!DNS1123_SUBDOMAIN.test(pod))
    return `pod ${showValue(pod)} is not a DNS-1123 subdomain (lowercase letters, digits, "-" and ".", each part starting and ending with a letter or digit, at most 253 characters)`
  return { kind: 'pod', pod, ...(namespace !== undefined ? { namespace } : {}) }
}

/** `[namespace/]pod`, as --host names it. */
export function podText(host: PodHost): string {
  return host.namespace === undefined ? host.pod : `${host.namespace}/${host.pod}`
}

/** kubectl's global options armproof passes on, each `--name=value`; those that take a value. */
const KUBECTL_VALUED = new Set([
  'as',
  'as-group',
  'as-uid',
  'cache-dir',
  'certificate-authority',
  'client-certificate',
  'client-key',
  'cluster',
  'context',
  'kubeconfig',
  'request-timeout',
  'server',
  'tls-server-name',
  'user',
  'v',
])
const KUBECTL_SWITCHES = new Set(['insecure-skip-tls-verify', 'match-server-version', 'disable-compression', 'warnings-as-errors'])
const KUBECTL_SHORT: Readonly<Record<string, string>> = { s: 'server', v: 'v', n: 'namespace' }
const SECRET_RULE =
  "a secret on kubectl's command line is seen by ps on this machine and kept in the run's identity: put it in a kubeconfig and pass --kubeconfig PATH (or --context NAME)"
const KUBECTL_REFUSED: Readonly<Record<string, string>> = {
  token: SECRET_RULE,
  password: SECRET_RULE,
  username: SECRET_RULE,
  namespace: 'give the namespace in --host <namespace>/<pod>',
  profile: 'it writes a profile file beside the run',
  'profile-output': 'it writes a profile file beside the run',
}

/**
 * `--kube-opts` split as a shell would (no expansion: `$`, backticks and operators refused), then
 * read as kubectl's global options, each kept as `--name=value` so no value is ever read as a
 * pod or a command; anything else is refused with why.
 */
export function parseKubeOpts(text: string): { opts: string[] } | { problems: string[] } {
  let words: string[]
  try {
    words = splitWords(text)
  } catch (error) {
    if (!(error instanceof ShellWordsError)) throw error
    // Not shown: kubectl's options may carry a secret the operator should not have put there.
    return { problems: [`cannot be split as a shell would (the value is not shown): ${error.message}`] }
  }
  const opts: string[] = []
  const problems: string[] = []
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!
    const m = /^(?:--([a-z][a-z-]*)|-([a-z]))(?:=(.*))?$/s.exec(word)
    if (!m) {
      problems.push(
        "a word that is not a kubectl option (not shown: it may be a secret); kubectl's options are --name or --name=value, and the pod goes in --host",
      )
      continue
    }
    const name = m[1] ?? KUBECTL_SHORT[m[2]!] ?? `-${m[2]}`
    if (Object.hasOwn(KUBECTL_REFUSED, name)) {
      problems.push(`--${name} is refused: ${KUBECTL_REFUSED[name]}`)
      // A secret's value goes with it, unseen.
      if (m[3] === undefined && words[i + 1] !== undefined && !words[i + 1]!.startsWith('-')) i++
      continue
    }
    if (KUBECTL_SWITCHES.has(name)) {
      if (m[3] !== undefined && m[3] !== 'true' && m[3] !== 'false') problems.push(`--${name} takes true or false, not ${showValue(m[3])}`)
      else opts.push(m[3] === undefined ? `--${name}` : `--${name}=${m[3]}`)
      continue
    }
    if (!KUBECTL_VALUED.has(name)) {
      // Its value, if it has one, goes with it, unseen.
      let value = m[3] !== undefined
      if (!value && words[i + 1] !== undefined && !words[i + 1]!.startsWith('-')) {
        value = true
        i++
      }
      problems.push(
        `${showValue(word.replace(/=.*$/s, ''))}${value ? ' (its value is not shown)' : ''} is not one of the kubectl options armproof passes on (--${[...KUBECTL_VALUED, ...KUBECTL_SWITCHES].sort().join(', --')})`,
      )
      continue
    }
    const value = m[3] ?? (words[i + 1] !== undefined && !words[i + 1]!.startsWith('-') ? words[++i]! : undefined)
    if (value === undefined || value === '') problems.push(`--${name} needs a value`)
    else opts.push(`--${name}=${value}`)
  }
  return problems.length ? { problems } : { opts }
}

/** kubectl's options for one target: `--kube-opts`, then its namespace (`--host namespace/pod`). What `{kube}` stands for. */
export function kubectlOptions(target: { kubeOpts: readonly string[]; host: { kind: string; namespace?: string } }): string[] {
  return [
    ...target.kubeOpts,
    ...(target.host.kind === 'pod' && target.host.namespace !== undefined ? [`--namespace=${target.host.namespace}`] : []),
  ]
}

/** What an operator's command template's placeholders stand for in one target (helpers/seams/host.ts `fillTemplate` quotes them). */
export function templateValues(target: {
  svc: string
  unit: string | null
  kubeOpts: readonly string[]
  host: { kind: string; pod?: string; namespace?: string }
}): Record<string, string | string[] | null> {
  return {
    svc: target.svc,
    unit: target.unit,
    // {container}: nothing until a step has read the pod (../steps/_host.ts runTemplate fills it).
    ...(target.host.kind === 'pod' ? { pod: target.host.pod!, kube: kubectlOptions(target), container: [] } : {}),
  }
}
