// First contact, the host side: a base URL whose port nothing on --host serves is the operator's
// mistake (a port one off, a copy-paste from another target), answered at once with the ports
// the engines there do listen on, instead of waiting out the health budget for a port that will
// never open. Only where the URL names the host inspected (./same-host.ts), and never while an
// engine there may still be loading onto that port (its argv names it, or names no port). `signal`:
// the caller no longer wants the answer (the endpoint refused first): the reads end there.
import type { HostClient } from '../seams/host.ts'
import { readSurvey, type EngineQuery } from './find.ts'
import { othersOf, portListeners } from './describe.ts'
import { urlIsThisHost } from './same-host.ts'
import { containerScript, parseContainer, surveyOf } from './survey.ts'
import { containerTool } from './runtime.ts'

export interface UnservedPort {
  message: string
  where: string
}

export async function unservedPort(
  host: HostClient,
  q: EngineQuery,
  baseUrl: string,
  signal?: AbortSignal,
): Promise<UnservedPort | undefined> {
  if (q.port === null || !urlIsThisHost(q.urlHost, q.host)) return undefined
  // A host that cannot be read (or a read cancelled) is for the steps to report (inconclusive), not a mistake.
  const surveyed = await readSurvey(host, q, signal)
  if (surveyed.failure) return undefined
  const survey = surveyOf(surveyed)
  if (portListeners(survey, q).length > 0) return undefined
  const tool = containerTool(q.runtime)
  if (tool !== null) {
    const inspected = await host.run({ script: containerScript(q.svc, tool), asDeployUser: true, timeoutMs: q.timeoutMs }, signal)
    // A container of that name (running or not) is the service: whatever its port does is for the steps to say.
    if (inspected.failure || parseContainer(inspected.stdout).pid !== null) return undefined
  }
  const others = othersOf(survey, q.process, null)
  const loading = others.some((o) => o.portsFrom === 'none' || (o.portsFrom === 'argv' && o.ports.includes(q.port!)))
  if (loading) return undefined
  const u = new URL(baseUrl)
  const ports = [...new Set(others.flatMap((o) => o.ports))].sort((a, b) => a - b)
  const at = (port: number) => {
    const v = new URL(u.href)
    v.port = String(port)
    return v.href.replace(/\/+$/, '')
  }
  const engines = others.length
    ? `the engines named ${q.process} there listen on ${others.map((o) => `port ${o.ports.join(', ')} (pid ${o.pid}${o.portsFrom === 'argv' ? ', its --port' : ''})`).join(', ')}`
    : `no engine named ${q.process} runs there either`
  const nearest = [...ports].sort((a, b) => Math.abs(a - q.port!) - Math.abs(b - q.port!))[0]
  const fix =
    nearest === undefined
      ? "; check --base-url's port, --host and --svc"
      : `; did you mean --base-url ${at(nearest)}${ports.length > 1 ? ' (the nearest)' : ''}?`
  return {
    where: `${host.where}: /proc/net/tcp{,6}; pidof ${q.process}${tool ? `; ${tool} inspect ${q.svc}` : ''}`,
    message: `--base-url: nothing on ${host.where === 'local' ? 'this host' : host.where.replace(/^ssh /, '')} listens on port ${q.port}${tool ? ` and no container answers for ${q.svc}` : ''}: ${engines}${fix}`,
  }
}
