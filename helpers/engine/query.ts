// What the lookup of ./find.ts asks, from one target's options.
import type { Target } from '../config/load.ts'
import { kubectlOptions, podText } from '../config/runtime.ts'
import { endpointOf, type EngineQuery } from './find.ts'

export function engineQuery(
  target: Pick<Target, 'process' | 'svc' | 'unit' | 'baseUrl' | 'pidCmd' | 'host' | 'hostTimeoutMs' | 'runtime' | 'kubeOpts'>,
): EngineQuery {
  const pod = target.host.kind === 'pod' ? { pod: target.host.pod, name: podText(target.host), kube: kubectlOptions(target) } : null
  return {
    process: target.process,
    svc: target.svc,
    unit: target.unit,
    ...endpointOf(target.baseUrl),
    pidCmd: target.pidCmd,
    host: target.host,
    timeoutMs: target.hostTimeoutMs,
    runtime: target.runtime,
    pod,
  }
}
