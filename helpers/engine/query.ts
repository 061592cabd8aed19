// What the lookup of ./find.ts asks, from one target's options.
import type { Target } from '../config/load.ts'
import { endpointOf, type EngineQuery } from './find.ts'

export function engineQuery(target: Pick<Target, 'process' | 'svc' | 'unit' | 'baseUrl' | 'pidCmd' | 'host' | 'hostTimeoutMs'>): EngineQuery {
  return { process: target.process, svc: target.svc, unit: target.unit, ...endpointOf(target.baseUrl), pidCmd: target.pidCmd, host: target.host, timeoutMs: target.hostTimeoutMs }
}
