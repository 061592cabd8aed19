// What `docker inspect` and `kubectl get pod -o json` answer for the engine a launcher started:
// a running container (host networking, so the engine's port is the host's) and a pod with
// hostPID and hostNetwork (so the pid and the port the host sees are the pod's too). Written as
// JSON next to the engine's shims; engine/runtime-cli.ts reads it.

/** What the runtime itself can get wrong around a healthy engine (`startEngine({ runtimeFaults })`), for the runtime's own red and inconclusive rows. */
export const RUNTIME_FAULTS = [
  {
    name: 'container_stopped',
    description:
      "the engine's container is not running: docker inspect says exited (State.Pid 0), podman inspect's State.Pid is 0, the pod's container waits in CrashLoopBackOff; exec into it fails, its log still reads",
  },
  {
    name: 'kubectl_refused',
    description:
      'kubectl cannot reach the API server: every kubectl command answers "The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?"',
  },
] as const

export type RuntimeFaultName = (typeof RUNTIME_FAULTS)[number]['name']

export interface RuntimeFacts {
  svc: string
  namespace: string
  /** The command in the container that is the engine (`vllm`, `radiance`, …). */
  binary: string
  image: string
  args: readonly string[]
  env: Readonly<Record<string, string>>
  pid: number
  port: number
  startedAt: Date
  /** The runtime's own misbehaviours (RUNTIME_FAULTS); none by default. */
  faults?: readonly RuntimeFaultName[]
}

const stopped = (f: RuntimeFacts): boolean => f.faults?.includes('container_stopped') === true

// node:crypto's CommonJS module: its ESM view's getters load webcrypto too.
const hex64 = (seed: string): string => process.getBuiltinModule('node:crypto').createHash('sha256').update(seed).digest('hex')

/** The image id the runtime reports for a container of `image` (docker's and podman's `.Image`, the pod's imageID digest). */
export const imageId = (image: string): string => `sha256:${hex64(`image:${image}`)}`

export function dockerInspect(f: RuntimeFacts): unknown[] {
  const id = hex64(`container:${f.svc}:${f.pid}`)
  const started = f.startedAt.toISOString().replace(/Z$/, '000000Z')
  return [
    {
      Id: id,
      Created: started,
      Path: f.binary,
      Args: [...f.args],
      State: stopped(f)
        ? {
            Status: 'exited',
            Running: false,
            Paused: false,
            Restarting: false,
            OOMKilled: false,
            Dead: false,
            Pid: 0,
            ExitCode: 1,
            Error: '',
            StartedAt: started,
            FinishedAt: started,
          }
        : {
            Status: 'running',
            Running: true,
            Paused: false,
            Restarting: false,
            OOMKilled: false,
            Dead: false,
            Pid: f.pid,
            ExitCode: 0,
            Error: '',
            StartedAt: started,
            FinishedAt: '0001-01-01T00:00:00Z',
          },
      Image: imageId(f.image),
      Name: `/${f.svc}`,
      RestartCount: 0,
      HostConfig: { NetworkMode: 'host', RestartPolicy: { Name: 'unless-stopped', MaximumRetryCount: 0 } },
      Config: {
        Hostname: f.svc,
        Image: f.image,
        Entrypoint: [f.binary],
        Cmd: [...f.args],
        Env: Object.entries(f.env).map(([k, v]) => `${k}=${v}`),
        ExposedPorts: { [`${f.port}/tcp`]: {} },
        Labels: {},
      },
      NetworkSettings: { Ports: {}, IPAddress: '' },
    },
  ]
}

export function kubePod(f: RuntimeFacts): Record<string, unknown> {
  const started = f.startedAt.toISOString().replace(/\.\d{3}Z$/, 'Z')
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: f.svc,
      namespace: f.namespace,
      uid: hex64(`pod:${f.namespace}/${f.svc}`).replace(/^(.{8})(.{4})(.{4})(.{4})(.{12}).*$/, '$1-$2-$3-$4-$5'),
      creationTimestamp: started,
      labels: { app: f.svc },
    },
    spec: {
      hostPID: true,
      hostNetwork: true,
      containers: [
        {
          name: f.binary,
          image: f.image,
          command: [f.binary],
          args: [...f.args],
          ports: [{ name: 'http', containerPort: f.port, hostPort: f.port, protocol: 'TCP' }],
          env: Object.entries(f.env).map(([name, value]) => ({ name, value })),
        },
      ],
    },
    status: {
      phase: 'Running',
      hostIP: '127.0.0.1',
      podIP: '127.0.0.1',
      podIPs: [{ ip: '127.0.0.1' }],
      startTime: started,
      containerStatuses: [
        stopped(f)
          ? {
              name: f.binary,
              ready: false,
              started: false,
              restartCount: 5,
              image: f.image,
              imageID: `${f.image}@${imageId(f.image)}`,
              containerID: `containerd://${hex64(`container:${f.svc}:${f.pid}`)}`,
              state: {
                waiting: {
                  reason: 'CrashLoopBackOff',
                  message: `back-off 2m40s restarting failed container=${f.binary} pod=${f.svc}_${f.namespace}`,
                },
              },
              lastState: { terminated: { exitCode: 1, reason: 'Error', startedAt: started, finishedAt: started } },
            }
          : {
              name: f.binary,
              ready: true,
              started: true,
              restartCount: 0,
              image: f.image,
              imageID: `${f.image}@${imageId(f.image)}`,
              containerID: `containerd://${hex64(`container:${f.svc}:${f.pid}`)}`,
              state: { running: { startedAt: started } },
            },
      ],
    },
  }
}
