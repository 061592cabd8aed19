// Runtimes (`--runtime podman|docker|kubernetes|process`): the configuration each needs and
// refuses (a pod's name by DNS-1123, kubectl's options one by one, never a secret), the default
// commands each runs, the placeholders its templates take, the drop-in gate each declares skipped,
// and the engine lookup's runtime step against made-up hosts (test/support/fake-proc.ts): docker's
// container, the pod read first (NotFound, a refused kubectl, a crash-looping container), every
// /proc read in the pod through kubectl exec, the pod's declared port; a bare process has no step.
import { describe, expect, test } from 'vitest'
import { loadConfig, type Target } from '../../helpers/config/load.ts'
import { parseKubeOpts, parsePodHost } from '../../helpers/config/runtime.ts'
import { findEngine, type EngineQuery } from '../../helpers/engine/find.ts'
import { engineQuery } from '../../helpers/engine/query.ts'
import { inPodTrouble, kubectlFailure, parsePod, procRun } from '../../helpers/engine/runtime.ts'
import { fillTemplate } from '../../helpers/seams/host.ts'
import { templateValues } from '../../helpers/config/runtime.ts'
import { declaredSkips } from '../../helpers/steps/verdict.ts'
import { runIdentity } from '../../helpers/report/identity.ts'
import { reportHead } from '../../helpers/report/head.ts'
import { fakeProcHost, podObject, type FakeHostState } from '../support/fake-proc.ts'
import { cleanup } from '../support/run-verify.ts'
import { createContext } from '../../helpers/steps/context.ts'
import { checkArgv } from '../../helpers/steps/argv/judge.ts'
import { runTemplate } from '../../helpers/steps/_host.ts'
import { verifyInProcess } from '../support/verify-in-process.ts'

const BASE = ['--svc', 'llm-7', '--knob', 'PREFILL_INTERLEAVE', '--base-url', 'http://127.0.0.1:8000']

function config(extra: string[]): ReturnType<typeof loadConfig> {
  return loadConfig({ argv: [...BASE, ...extra], env: {} })
}
function target(extra: string[]): Target {
  const r = config(extra)
  if (!r.ok) throw new Error(r.problems.map((p) => p.message).join('\n'))
  return r.target
}
function problems(extra: string[]): string[] {
  const r = config(extra)
  return r.ok ? [] : r.problems.map((p) => p.message)
}

describe('each runtime has its default commands, unit and placeholders', () => {
  test('podman, the default, is exactly what it always was', () => {
    const t = target([])
    expect([t.runtime, t.ledgerCmd, t.helpCmd, t.unit, t.host]).toEqual([
      'podman',
      'podman logs --tail 100000 {svc}',
      'podman exec {svc} radiance --help',
      'llm-7',
      { kind: 'local' },
    ])
    expect(declaredSkips(t)).toEqual([])
  })

  test('docker reads docker logs and docker exec; no unit unless --unit says one, so the drop-in gate is a declared skip', () => {
    const t = target(['--runtime', 'docker'])
    expect([t.ledgerCmd, t.helpCmd, t.unit]).toEqual(['docker logs --tail 100000 {svc}', 'docker exec {svc} radiance --help', null])
    expect(declaredSkips(t)).toEqual(['dropins'])
    expect(target(['--runtime', 'docker', '--unit', 'docker-{svc}.service']).unit).toBe('docker-llm-7.service')
    expect(declaredSkips(target(['--runtime', 'docker', '--unit', '{svc}']))).toEqual([])
  })

  test('kubernetes: --host is the pod ([namespace/]pod), kubectl logs and exec take {kube} and {pod}; no unit, ever', () => {
    const t = target(['--runtime', 'kubernetes', '--host', 'llm/llm-7-0', '--kube-opts', '--context prod'])
    expect([t.host, t.kubeOpts, t.unit]).toEqual([{ kind: 'pod', pod: 'llm-7-0', namespace: 'llm' }, ['--context=prod'], null])
    expect(fillTemplate(t.ledgerCmd, templateValues(t))).toBe('kubectl logs --context=prod --namespace=llm --tail 100000 llm-7-0')
    expect(fillTemplate(t.helpCmd, templateValues(t))).toBe('kubectl exec --context=prod --namespace=llm llm-7-0 -- radiance --help')
    expect(declaredSkips(t)).toEqual(['dropins'])
    expect(reportHead(t).host).toBe('llm/llm-7-0')
    expect(runIdentity(t).skips).toEqual(['dropins'])
    // Without --host: the pod named --svc, in the context's namespace.
    expect(target(['--runtime', 'kubernetes']).host).toEqual({ kind: 'pod', pod: 'llm-7' })
    expect(problems(['--runtime', 'kubernetes', '--unit', 'x'])).toEqual([
      '--unit: does not apply under --runtime kubernetes: a pod has no systemd unit (the drop-in gate is skipped, with why)',
    ])
  })

  test('process: journalctl -u <unit> with --unit, else --ledger-cmd is required; --help from the binary the engine process runs', () => {
    const t = target(['--runtime', 'process', '--unit', 'radiance@{svc}'])
    expect([t.ledgerCmd, t.helpCmd, t.unit]).toEqual([
      'journalctl -u {unit} -o cat --no-pager -n 100000',
      '{engine} --help',
      'radiance@llm-7',
    ])
    // The profile's help command with its program replaced: vLLM's asks `serve --help=all` of the engine's own binary.
    expect(target(['--runtime', 'process', '--unit', 'x', '--engine', 'vllm', '--knob', 'MAX_NUM_SEQS']).helpCmd).toBe(
      '{engine} serve --help=all',
    )
    // {engine} in the operator's --help-cmd too (and quoted in as words, helpers/engine/binary.ts); never in another command, nor under a container's runtime.
    expect(target(['--runtime', 'process', '--unit', 'x', '--help-cmd', 'sudo -u vllm {engine} --help']).helpCmd).toBe(
      'sudo -u vllm {engine} --help',
    )
    expect(fillTemplate('{engine} --help', { engine: ['/opt/venv/bin/python3', '/opt/my venv/bin/vllm'] })).toBe(
      "/opt/venv/bin/python3 '/opt/my venv/bin/vllm' --help",
    )
    expect(problems(['--runtime', 'process', '--unit', 'x', '--ledger-cmd', 'cat {engine}.log'])[0]).toContain(
      'unknown placeholder {engine}',
    )
    expect(problems(['--help-cmd', 'podman exec {svc} {engine} --help'])[0]).toContain('unknown placeholder {engine}; known: {svc}, {unit}')
    expect(fillTemplate(t.ledgerCmd, templateValues(t))).toBe('journalctl -u radiance@llm-7 -o cat --no-pager -n 100000')
    expect(problems(['--runtime', 'process'])).toEqual([
      "--ledger-cmd: --runtime process: give --ledger-cmd (the command printing the engine's boot log) or --unit (its journal is read with journalctl -u <unit>)",
    ])
    const bare = target(['--runtime', 'process', '--ledger-cmd', 'tail -n 100000 /var/log/radiance.log'])
    expect([bare.unit, declaredSkips(bare)]).toEqual([null, ['dropins']])
    // {unit} names nothing without a unit; {pod} nothing outside kubernetes.
    expect(problems(['--runtime', 'process', '--ledger-cmd', 'journalctl -u {unit}'])[0]).toContain(
      'uses {unit}, but no unit stands for the engine under --runtime process: give --unit',
    )
    expect(problems(['--ledger-cmd', 'kubectl logs {pod}'])[0]).toContain('unknown placeholder {pod}; known: {svc}, {unit}')
    expect(target(['--runtime', 'kubernetes', '--pid-cmd', 'kubectl exec {kube} {pod} -- pgrep -o radiance']).pidCmd).toBe(
      'kubectl exec {kube} {pod} -- pgrep -o radiance',
    )
  })

  test('an unknown runtime, and options of one runtime given to another, are refused before contact', () => {
    expect(problems(['--runtime', 'k8s'])).toEqual([
      '--runtime: invalid runtime "k8s"; must be one of: podman, docker, kubernetes, process',
    ])
    expect(problems(['--kube-opts', '--context prod'])).toEqual(['--kube-opts: only applies under --runtime kubernetes'])
    expect(problems(['--runtime', 'kubernetes', '--ssh-opts', '-p 2222'])[0]).toContain(
      'does not apply under --runtime kubernetes: kubectl reaches the pod',
    )
    expect(problems(['--runtime', 'kubernetes', '--host', 'local'])[0]).toContain('under --runtime kubernetes --host names the pod')
    expect(problems(['--runtime', 'kubernetes', '--host', 'deploy@gpu-7'])[0]).toContain('under --runtime kubernetes --host names the pod')
    expect(problems(['--host', 'llm/llm-7-0'])[0]).toContain('a pod, [namespace/]pod, is --host under --runtime kubernetes')
    const env = (argv: string[]) => loadConfig({ argv: [...BASE, ...argv], env: { VERIFY_RUNTIME: 'docker' } })
    expect(((r) => r.ok && r.target.runtime)(env([]))).toBe('docker')
    expect(((r) => r.ok && r.target.runtime)(env(['--runtime', 'process', '--unit', 'x']))).toBe('process')
    const fromEnv = loadConfig({
      argv: BASE,
      env: { VERIFY_RUNTIME: 'kubernetes', VERIFY_KUBE_OPTS: '--kubeconfig /etc/armproof/kube.yaml', VERIFY_HOST: 'llm/llm-7-0' },
    })
    expect(fromEnv.ok && [fromEnv.target.runtime, fromEnv.target.kubeOpts]).toEqual([
      'kubernetes',
      ['--kubeconfig=/etc/armproof/kube.yaml'],
    ])
  })
})

describe("a pod's name and kubectl's options: only what Kubernetes and kubectl take reaches the shell", () => {
  test('pod names are DNS-1123 subdomains, namespaces DNS-1123 labels', () => {
    expect(parsePodHost('llm-7-0')).toEqual({ kind: 'pod', pod: 'llm-7-0' })
    expect(parsePodHost('team-a/llm.7-0')).toEqual({ kind: 'pod', pod: 'llm.7-0', namespace: 'team-a' })
    for (const bad of [
      'LLM-7',
      'llm_7',
      '-llm',
      'llm-',
      'a/b/c',
      'llm;reboot',
      '$(id)',
      'llm 7',
      'rädiance',
      `${'a'.repeat(254)}`,
      '',
      'ns/',
      '/pod',
      'a.-b',
    ])
      expect(typeof parsePodHost(bad), bad).toBe('string')
    expect(parsePodHost(`${'n'.repeat(64)}/pod`)).toContain('is not a DNS-1123 label')
    expect(typeof parsePodHost(`${'n'.repeat(63)}/${'p'.repeat(253)}`)).toBe('object')
  })

  test("kubectl's global options are kept as --name=value; a secret, a namespace, a stranger or a shell's syntax is refused", () => {
    expect(
      parseKubeOpts('--context prod --kubeconfig=/etc/k.yaml -s https://k8s:6443 --insecure-skip-tls-verify --request-timeout 20s -v 4'),
    ).toEqual({
      opts: [
        '--context=prod',
        '--kubeconfig=/etc/k.yaml',
        '--server=https://k8s:6443',
        '--insecure-skip-tls-verify',
        '--request-timeout=20s',
        '--v=4',
      ],
    })
    expect(parseKubeOpts(`--context 'a;reboot'`)).toEqual({ opts: ['--context=a;reboot'] })
    const refused = (text: string) => {
      const r = parseKubeOpts(text)
      return 'problems' in r ? r.problems : []
    }
    expect(refused('--token sk-cluster-secret')).toEqual([
      expect.stringContaining("--token is refused: a secret on kubectl's command line"),
    ])
    expect(refused('--token sk-cluster-secret').join(' ')).not.toContain('sk-cluster-secret')
    expect(refused('--password=hunter2').join(' ')).not.toContain('hunter2')
    expect(refused('-n llm')).toEqual(['--namespace is refused: give the namespace in --host <namespace>/<pod>'])
    expect(refused('--context')).toEqual(['--context needs a value'])
    expect(refused('--context --kubeconfig x')).toEqual(['--context needs a value'])
    expect(refused('--insecure-skip-tls-verify=maybe')).toEqual(['--insecure-skip-tls-verify takes true or false, not "maybe"'])
    expect(refused('--exec-command=sh')[0]).toContain(
      '"--exec-command" (its value is not shown) is not one of the kubectl options armproof passes on',
    )
    expect(refused('--tokn sk-cluster-secret')).toEqual([expect.stringContaining('"--tokn" (its value is not shown) is not one of')])
    expect(refused('--tokn sk-cluster-secret sk-other').join(' ')).not.toMatch(/sk-/)
    expect(refused('llm-7-0')[0]).toContain(
      "is not a kubectl option (not shown: it may be a secret); kubectl's options are --name or --name=value, and the pod goes in --host",
    )
    for (const hostile of [
      '--context $(id)',
      '--context `id`',
      '--context a;reboot',
      '--context a|b',
      '--context a&',
      "--context 'a",
      '--context "a',
    ])
      expect(refused(hostile), hostile).toEqual([expect.stringMatching(/^cannot be split as a shell would \(the value is not shown\): /)])
  })

  test('verify refuses hostile values with exit 2 before anything is contacted, a secret never echoed', async () => {
    const run = await verifyInProcess([
      ...BASE,
      '--runtime',
      'kubernetes',
      '--host',
      'llm/pod;reboot',
      '--kube-opts',
      '--token sk-cluster-secret --context $(id)',
    ])
    expect(run.exitCode).toBe(2)
    expect(run.stderr).toContain('nothing was contacted')
    expect(run.stderr).toContain('is not a DNS-1123 subdomain')
    expect(run.stderr).toContain('cannot be split')
    expect(run.stderr).not.toContain('sk-cluster-secret')
    cleanup(run)
  })

  test('a value that holds quotes, semicolons or a placeholder is quoted into the command, never substituted again', () => {
    const t = target(['--runtime', 'kubernetes', '--host', 'llm/x', '--kube-opts', `--context 'a;reboot {svc}'`])
    expect(fillTemplate('kubectl logs {kube} {pod}', templateValues(t))).toBe(`kubectl logs '--context=a;reboot {svc}' --namespace=llm x`)
  })
})

describe('--skip: the probes a served model cannot take', () => {
  test("probe.vision and probe.tools, in the steps' order, repeats folded; declared with the run", () => {
    const t = target(['--skip', ' probe.vision, probe.tools,probe.vision'])
    expect(t.skip).toEqual(['probe.tools', 'probe.vision'])
    expect(declaredSkips(t)).toEqual(['probe.tools', 'probe.vision'])
    expect(loadConfig({ argv: BASE, env: { VERIFY_SKIP: 'probe.vision' } }).ok).toBe(true)
  })

  test('nothing else can be skipped this way, each said why', () => {
    expect(problems(['--skip', 'meter'])).toEqual([
      '--skip: "meter" cannot be skipped: only the probes a served model may not take can be (probe.tools, probe.vision)',
    ])
    expect(problems(['--skip', 'probe.exact'])[0]).toContain('every chat model must answer the exact word')
    expect(problems(['--skip', 'dropins'])[0]).toContain('--no-dropin-check')
  })
})

const Q = (more: Partial<EngineQuery> = {}): EngineQuery => ({
  process: 'radiance',
  svc: 'llm-7',
  unit: null,
  port: 8000,
  urlHost: '127.0.0.1',
  pidCmd: null,
  host: { kind: 'local' },
  timeoutMs: 1000,
  ...more,
})
const POD = { pod: 'llm-7-0', name: 'llm/llm-7-0', kube: ['--context=prod', '--namespace=llm'] }
const proxied: FakeHostState['procs'] = [
  { pid: '100', name: 'nginx', sockets: [{ port: 8000 }] },
  { pid: '200', name: 'radiance', argv: ['/usr/bin/radiance', '--port', '9000', '--prefill-interleave', '1'], sockets: [{ port: 9000 }] },
  { pid: '201', name: 'radiance', argv: ['/usr/bin/radiance', '--port', '9100'], sockets: [{ port: 9100 }] },
]

describe("the engine lookup's runtime step", () => {
  test("docker: behind a proxy, the engine is {svc}'s container's process, found with docker inspect --type=container", async () => {
    const host = fakeProcHost({ procs: proxied, container: '200' })
    const found = await findEngine(host, Q({ runtime: 'docker' }))
    expect(found.kind === 'found' && [found.pid, found.foundBy, found.how]).toEqual([
      '200',
      'container',
      expect.stringContaining('is the engine of container llm-7 (its main process, docker inspect)'),
    ])
    expect(host.calls[1]).toContain("docker inspect --type=container --format '{{.State.Pid}}' llm-7")
  })

  test('docker: a stopped container is said, with the docker commands to start it (no unit to name)', async () => {
    const found = await findEngine(fakeProcHost({ procs: proxied, container: '0' }), Q({ runtime: 'docker' }))
    expect(found.kind).toBe('missing')
    expect(found.kind === 'missing' && [found.observed, found.next]).toEqual([
      expect.stringContaining('exists but is not running (docker inspect: State.Pid 0)'),
      expect.stringContaining('docker start llm-7'),
    ])
  })

  test('process: no container is asked for; two engines behind a proxy stay ambiguous, never guessed', async () => {
    const host = fakeProcHost({ procs: proxied })
    const found = await findEngine(host, Q({ runtime: 'process' }))
    expect(found.kind).toBe('ambiguous')
    expect(host.calls.some((c) => /inspect/.test(c))).toBe(false)
  })

  test('kubernetes: the pod first, then every /proc read in it through kubectl exec; the port it declares finds the engine behind a Service', async () => {
    const host = fakeProcHost({ procs: proxied, kubectl: { pod: podObject([9000]) } })
    const found = await findEngine(host, Q({ runtime: 'kubernetes', pod: POD }))
    expect(found.kind === 'found' && [found.pid, found.foundBy, found.how]).toEqual([
      '200',
      'container',
      expect.stringContaining('listens on port 9000, which pod llm/llm-7-0 declares for its container'),
    ])
    expect(host.calls[0]).toBe('kubectl get pod --context=prod --namespace=llm llm-7-0 -o json')
    expect(host.calls.slice(1).every((c) => c.startsWith("kubectl exec --context=prod --namespace=llm llm-7-0 -- sh -c '"))).toBe(true)
    expect(host.calls.some((c) => /inspect/.test(c))).toBe(false)
  })

  test("kubernetes: the default ledger and help commands take -c into the container declaring the port where a sidecar is kubectl's default; a pod of one, none", async () => {
    const t = target(['--runtime', 'kubernetes', '--host', 'llm/llm-7-0', '--kube-opts', '--context prod'])
    const ctx = (host: ReturnType<typeof fakeProcHost>) =>
      createContext({
        target: t,
        http: { request: () => Promise.reject(new Error('no HTTP')) },
        host,
        clock: { now: () => 0, sleep: async () => {} },
        choices: { pick: (_n, o) => o[0]! },
      })
    const port = new URL(t.baseUrl!).port
    const sidecar = fakeProcHost({
      procs: [],
      kubectl: { pod: podObject([Number(port)], { sidecar: { name: 'istio-proxy', ports: [15090] } }) },
    })
    await runTemplate(ctx(sidecar), t.ledgerCmd)
    await runTemplate(ctx(sidecar), t.helpCmd)
    expect(sidecar.calls).toEqual([
      'kubectl get pod --context=prod --namespace=llm llm-7-0 -o json',
      '{ kubectl logs --context=prod --namespace=llm -c engine --tail 100000 llm-7-0 ; } 2>&1',
      'kubectl get pod --context=prod --namespace=llm llm-7-0 -o json',
      '{ kubectl exec --context=prod --namespace=llm llm-7-0 -c engine -- radiance --help ; } 2>&1',
    ])
    // Without -c, kubectl's default (the sidecar, listed first) would take both reads.
    const one = fakeProcHost({ procs: [], kubectl: { pod: podObject([Number(port)]) } })
    await runTemplate(ctx(one), t.ledgerCmd)
    expect(one.calls.at(-1)).toBe('{ kubectl logs --context=prod --namespace=llm --tail 100000 llm-7-0 ; } 2>&1')
  })

  test("kubernetes: a sidecar listed first (kubectl exec's default) does not take the reads: they run with -c in the container declaring the port, said", async () => {
    const pod = podObject([8000], { sidecar: { name: 'istio-proxy', ports: [15090] } })
    const engine = [{ pid: '200', name: 'radiance', sockets: [{ port: 8000 }] }]
    const host = fakeProcHost({ procs: engine, kubectl: { pod } })
    const found = await findEngine(host, Q({ runtime: 'kubernetes', pod: POD, port: 8000 }))
    expect(found).toMatchObject({
      kind: 'found',
      pid: '200',
      container: { name: 'engine', why: 'the container declaring port 8000 (kubectl get pod)' },
    })
    expect(host.calls.slice(1).every((c) => c.startsWith("kubectl exec --context=prod --namespace=llm llm-7-0 -c engine -- sh -c '"))).toBe(
      true,
    )
    // Without -c every read lands in the sidecar, which cannot run them: the lookup observes nothing of the engine.
    const defaulted = await host.run(procRun({ pod: POD, timeoutMs: 1000 }, 'true'))
    expect([defaulted.exitCode, defaulted.stderr]).toEqual([
      126,
      expect.stringContaining('Defaulted container "istio-proxy" out of: istio-proxy, engine'),
    ])
    const unread = inPodTrouble(defaulted, POD, false)
    expect(unread?.observed).toContain('could not be read in pod llm/llm-7-0')
    // A pod of one container: no -c (kubectl's default is it), the commands as before.
    const one = fakeProcHost({ procs: engine, kubectl: { pod: podObject([8000]) } })
    expect(await findEngine(one, Q({ runtime: 'kubernetes', pod: POD, port: 8000 }))).not.toHaveProperty('container')
    expect(one.calls.slice(1).every((c) => c.startsWith("kubectl exec --context=prod --namespace=llm llm-7-0 -- sh -c '"))).toBe(true)
    // Through a Service port no container declares: the only one declaring a port at all.
    const svc = await findEngine(
      fakeProcHost({
        procs: [{ pid: '200', name: 'radiance', sockets: [{ port: 9000 }] }],
        kubectl: { pod: podObject([9000], { sidecar: { name: 'log-shipper', ports: [] } }) },
      }),
      Q({ runtime: 'kubernetes', pod: POD, port: 8443 }),
    )
    expect(svc).toMatchObject({
      kind: 'found',
      container: { name: 'engine', why: 'the only container declaring a port (9000; kubectl get pod)' },
    })
  })

  test("kubernetes: a pod that is not there is red's missing; a refused or forbidden kubectl observes nothing; a crash-looping container is named", async () => {
    const lookup = (kubectl: FakeHostState['kubectl']) =>
      findEngine(fakeProcHost({ procs: proxied, ...(kubectl ? { kubectl } : {}) }), Q({ runtime: 'kubernetes', pod: POD }))
    const gone = await lookup({ stderr: 'Error from server (NotFound): pods "llm-7-0" not found', exit: 1 })
    expect(gone.kind === 'missing' && gone.observed).toBe('no pod llm/llm-7-0: Error from server (NotFound): pods "llm-7-0" not found')
    const refused = await lookup({
      stderr: 'The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?',
      exit: 1,
    })
    expect(refused.kind === 'unobserved' && refused.next).toContain('check --kube-opts (--context, --kubeconfig, --server)')
    const rbac = await lookup({
      stderr:
        'Error from server (Forbidden): pods "llm-7-0" is forbidden: User "ci" cannot get resource "pods" in API group "" in the namespace "llm"',
      exit: 1,
    })
    expect(rbac.kind === 'unobserved' && rbac.next).toContain('get on pods and pods/log and create on pods/exec in namespace llm')
    const looping = await lookup({ pod: podObject([9000], { state: { waiting: { reason: 'CrashLoopBackOff' } } }) })
    expect(looping.kind === 'missing' && looping.observed).toBe(
      'pod llm/llm-7-0 is Running, its containers: engine waiting (CrashLoopBackOff): no container runs the engine',
    )
    const pending = await lookup({ pod: podObject([], { phase: 'Pending', state: { waiting: { reason: 'ContainerCreating' } } }) })
    expect(pending.kind === 'missing' && pending.observed).toContain('is Pending')
    const garbage = await lookup({ pod: { kind: 'Service' } })
    expect(garbage.kind).toBe('unobserved')
  })

  test('a container without sh (a distroless image) observes nothing, never "the engine is not running"', async () => {
    const host = fakeProcHost({
      procs: proxied,
      kubectl: { pod: podObject([9000]) },
      kubectlExec: {
        stderr:
          'OCI runtime exec failed: exec failed: unable to start container process: exec: "sh": executable file not found in $PATH: unknown\ncommand terminated with exit code 126',
        exit: 126,
      },
    })
    const found = await findEngine(host, Q({ runtime: 'kubernetes', pod: POD }))
    expect(found.kind).toBe('unobserved')
    expect(found.kind === 'unobserved' && [found.observed, found.next]).toEqual([
      expect.stringContaining('could not be read in pod llm/llm-7-0 (kubectl exec … -- sh -c exited 126)'),
      expect.stringContaining('a distroless image has none'),
    ])
  })

  test("kubectl's failures are read from its own words, nothing else", () => {
    expect(kubectlFailure('error: unable to upgrade connection: container not found ("engine")', 1)).toBe('container-down')
    expect(kubectlFailure('Unable to connect to the server: dial tcp 10.0.0.1:6443: i/o timeout', 1)).toBe('unreachable')
    expect(kubectlFailure('error: You must be logged in to the server (Unauthorized)', 1)).toBe('forbidden')
    expect(kubectlFailure('sh: 1: kubectl: not found', 127)).toBe('no-kubectl')
    expect(kubectlFailure('radiance: error: unrecognized arguments: --help=x', 2)).toBeUndefined()
    expect(parsePod({ command: '', stdout: 'not json', stderr: '', exitCode: 0, durationMs: 1 }).kind).toBe('unreadable')
  })

  test("step argv reads a pod's engine in the pod, and says where as one would type it", async () => {
    const t = target(['--runtime', 'kubernetes', '--host', 'llm/llm-7-0', '--kube-opts', '--context=prod', '--value', '1'])
    const host = fakeProcHost({
      procs: [
        {
          pid: '7',
          name: 'radiance',
          argv: ['/usr/bin/radiance', '--port', '8000', '--prefill-interleave', '1'],
          sockets: [{ port: 8000 }],
        },
      ],
      kubectl: { pod: podObject([8000]) },
    })
    const ctx = createContext({
      target: t,
      http: { request: () => Promise.reject(new Error('no HTTP')) },
      host,
      clock: { now: () => 0, sleep: async () => {} },
      choices: { pick: (_n, o) => o[0]! },
    })
    const j = await checkArgv(ctx, {})
    expect([j.verdict, j.where]).toEqual([
      'passed',
      "local: kubectl exec --context=prod --namespace=llm llm-7-0 -- tr '\\0' ' ' < /proc/7/cmdline",
    ])
    expect(j.gives?.engineProcess).toMatchObject({ pid: '7', foundBy: 'listener', listenerTied: false })
  })

  test('the query of a kubernetes target carries its pod and kubectl options; of any other, none', () => {
    expect(engineQuery(target(['--runtime', 'kubernetes', '--host', 'llm/llm-7-0', '--kube-opts', '--context=prod'])).pod).toEqual(POD)
    expect(engineQuery(target(['--runtime', 'docker'])).pod).toBeNull()
  })
})
