// What the runtime's own tool said when a host step's command (the ledger, --help) failed, turned
// into the next step: rootless podman's storage is per user; docker's daemon knows no such
// container, or it is stopped; kubectl could not reach the cluster, found no pod, may not read it,
// or its container is down. Undefined where the runtime said nothing it is known to say.
import { engineQuery } from '../engine/query.ts'
import { kubectlFailure, kubectlNext } from '../engine/runtime.ts'
import type { RunContext } from './context.ts'

export function runtimeHint(ctx: RunContext, output: string): string | undefined {
  const { runtime, svc } = ctx.target
  if (runtime === 'podman') {
    if (!/no such container|no container with name/i.test(output)) return undefined
    return `rootless podman storage is per user: the container is not visible to this user (sudo podman finds nothing). Set --deploy-user <user that owns ${svc}> or ssh in as that user`
  }
  if (runtime === 'docker') {
    if (/No such container/i.test(output))
      return `docker knows no container ${svc} on this host: check --svc against docker ps -a (the container's name, not its image)`
    if (/is not running/i.test(output))
      return `the container ${svc} is not running: docker ps -a and docker logs ${svc} say why it stopped; start it (docker start ${svc}) and run again`
    if (/docker\.sock.*permission denied|permission denied.*docker\.sock/i.test(output))
      return 'this user may not talk to the docker daemon: add it to the docker group, or give --deploy-user a user that may'
    return undefined
  }
  const pod = engineQuery(ctx.target).pod
  const kind = pod ? kubectlFailure(output, null) : undefined
  return pod && kind ? kubectlNext(kind, pod) : undefined
}
