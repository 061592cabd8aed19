// The manifests under examples/k8s/ are what Kubernetes, Argo Rollouts and Flagger take (schema
// validators from the npm registry, see test/support/manifests.ts), and they say what armproof
// does: the targets ConfigMap is a targets file armproof serve accepts, the controllers ask the
// routes that answer them the right way, their timeouts outlast a run, the Argo conditions map each
// verdict to the phase it must be, and the Indexed Job's shards cover the fleet exactly once.
import { chmodSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { execFileSync } from 'node:child_process'
import { describe, expect, test } from 'vitest'
import { loadConfig } from '../../helpers/config/load.ts'
import { parseDuration } from '../../helpers/config/duration.ts'
import { planFleet } from '../../helpers/fleet/plan.ts'
import { parseServeOptions } from '../../helpers/serve/options.ts'
import { RUN_ID, route } from '../../helpers/serve/routes.ts'
import { loadServedTargets } from '../../helpers/serve/targets.ts'
import { jobSpecs, readManifests, schemaProblems, type Manifest } from '../support/manifests.ts'
import { tempDir } from '../support/temp-dir.ts'

const FILES = [
  'targets-configmap.yaml',
  'serve.yaml',
  'argo-analysis-template.yaml',
  'flagger-canary.yaml',
  'job.yaml',
  'indexed-job.yaml',
  'merge-job.yaml',
]
const all = FILES.flatMap((f) => readManifests(f).map((m) => ({ file: f, m })))
const find = (kind: string, name: string): Manifest => all.find((x) => x.m.kind === kind && x.m.metadata.name === name)!.m
const dir = tempDir('armproof-k8s-')
const targetsFile = join(dir, 'targets.yaml')
writeFileSync(targetsFile, (find('ConfigMap', 'armproof-targets').data as Record<string, string>)['targets.yaml']!)
type Container = { name: string; image: string; command?: string[]; args?: string[]; env?: Array<{ name: string; value?: string }> }
const containersOf = (spec: Record<string, unknown>): Container[] =>
  (spec.template as { spec: { containers: Container[] } }).spec.containers
const serveArgs = (): string[] => containersOf(find('Deployment', 'armproof-serve').spec as Record<string, unknown>)[0]!.args!
/** The longest serve holds a request of a run: its wait for a slot and the run itself. */
const heldAtMost = (): number => {
  const opts = parseServeOptions(serveArgs().slice(1), {}, dir)
  if (!opts.ok) throw new Error(opts.problems.join('\n'))
  return opts.options.queueWaitMs + opts.options.runTimeoutMs
}
/** Argo's `result == "x" || …` over the verdict's word, as Argo evaluates it. */
const holds = (condition: string, result: string): boolean =>
  condition.split('||').some((term) => {
    const m = /^\s*result == "([a-z]+)"\s*$/.exec(term)
    if (!m) throw new Error(`a condition this test cannot read: ${term}`)
    return m[1] === result
  })

describe('schemas', () => {
  test.each(all.map((x) => [`${x.file}: ${x.m.kind} ${x.m.metadata.name}`, x.m] as const))('%s is valid', (_name, m) => {
    expect(schemaProblems(m)).toEqual([])
    // The job provider's Job spec is a Kubernetes JobSpec: checked as one too.
    for (const spec of jobSpecs(m))
      expect(schemaProblems({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'from-template' }, spec })).toEqual([])
  })

  test('the validators can fail: a wrong type, a missing required field, a webhook type Flagger does not have', () => {
    const job = structuredClone(find('Job', 'armproof-llm-7')) as Manifest & { spec: { backoffLimit: unknown } }
    job.spec.backoffLimit = 'none'
    expect(schemaProblems(job).join()).toContain('backoffLimit must be integer')
    const at = structuredClone(find('AnalysisTemplate', 'armproof-web')) as Manifest & {
      spec: { metrics: Array<{ provider: { web: Record<string, unknown> } }> }
    }
    delete at.spec.metrics[0]!.provider.web.url
    expect(schemaProblems(at).join()).toContain('must have required property url')
    const canary = structuredClone(find('Canary', 'llm-7')) as Manifest & {
      spec: { analysis: { webhooks: Array<Record<string, unknown>> } }
    }
    canary.spec.analysis.webhooks[0]!.type = 'pre-promotion'
    canary.spec.analysis.webhooks[1]!.timout = '5m'
    expect(schemaProblems(canary)).toHaveLength(2)
    expect(schemaProblems({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' } })).toEqual(['v1/Pod: no schema here for this kind'])
  })
})

describe('what the manifests say armproof does', () => {
  test("the targets ConfigMap is a targets file armproof serve starts with; serve.yaml's args are options it accepts", () => {
    const loaded = loadServedTargets(targetsFile, { VERIFY_NO_DOTENV: '1' }, dir, undefined)
    expect('targets' in loaded ? [...loaded.targets.argv.keys(), ...loaded.problems] : loaded.file.problems).toEqual([
      'llm-7',
      'llm-8',
      'llm-9',
      'llm-10',
    ])
    const args = serveArgs()
    expect(args[0]).toBe('serve')
    const parsed = parseServeOptions(args.slice(1), {}, dir)
    expect(parsed.ok ? [parsed.options.host, parsed.options.port, parsed.options.tokenFile] : parsed.problems).toEqual([
      '0.0.0.0',
      8080,
      '/secrets/serve-token',
    ])
  })

  test('Argo asks POST /analysis/<svc>, reads $.verdict, and waits longer than a run may take; each verdict maps to its phase', () => {
    const metric = (find('AnalysisTemplate', 'armproof-web').spec as { metrics: unknown[] }).metrics[0] as {
      successCondition: string
      failureCondition: string
      inconclusiveLimit: number
      provider: {
        web: { method: string; url: string; jsonPath: string; timeoutSeconds: number; headers: Array<{ key: string; value: string }> }
      }
    }
    const web = metric.provider.web
    expect(web.method).toBe('POST')
    expect(route(new URL(web.url.replace('{{args.svc}}', 'llm-7')).pathname)).toEqual({ kind: 'run', answer: 'body', svc: 'llm-7' })
    expect(web.jsonPath).toBe('{$.verdict}')
    expect(web.headers).toContainEqual({ key: 'Authorization', value: 'Bearer {{args.serve-token}}' })
    expect(web.timeoutSeconds * 1000).toBeGreaterThan(heldAtMost())
    // The conditions, evaluated as Argo evaluates `result == "x" || …` over the verdict's word.
    const phase = (v: string) =>
      holds(metric.successCondition, v) ? 'Successful' : holds(metric.failureCondition, v) ? 'Failed' : 'Inconclusive'
    expect(Object.fromEntries(['green', 'red', 'error', 'inconclusive', 'interrupted'].map((v) => [v, phase(v)]))).toEqual({
      green: 'Successful',
      red: 'Failed',
      error: 'Failed',
      inconclusive: 'Inconclusive',
      interrupted: 'Inconclusive',
    })
    expect(metric.inconclusiveLimit).toBe(0)
  })

  test('Argo, asynchronously: start asks POST /runs/<svc> with the id the verdict metric polls at GET /runs/<id>; its polls outlast a run; each verdict maps to its phase', () => {
    type Web = { method: string; url: string; jsonPath: string; body?: string; headers: Array<{ key: string; value: string }> }
    type Metric = {
      name: string
      successCondition: string
      failureCondition?: string
      count: number
      interval: string
      initialDelay?: string
      consecutiveErrorLimit: number
      inconclusiveLimit?: number
      provider: { web: Web }
    }
    const template = find('AnalysisTemplate', 'armproof-web-async').spec as { args: Array<{ name: string }>; metrics: Metric[] }
    const [start, verdict] = template.metrics
    expect([start!.name, verdict!.name]).toEqual(['start', 'verdict'])
    const args = { svc: 'llm-7', revision: '6d4b9c7f85' }
    const fill = (text: string): string => text.replace(/\{\{args\.([a-z-]+)\}\}/g, (_w, k: keyof typeof args) => args[k])
    for (const m of [start!, verdict!])
      expect(m.provider.web.headers).toContainEqual({ key: 'Authorization', value: 'Bearer {{args.serve-token}}' })
    expect([start!.provider.web.method, route(new URL(fill(start!.provider.web.url)).pathname, 'POST')]).toEqual([
      'POST',
      { kind: 'start', svc: 'llm-7' },
    ])
    // The id start chooses is the one verdict polls, and one serve takes (RUN_ID).
    const id = (JSON.parse(fill(start!.provider.web.body!)) as { id: string }).id
    expect(route(new URL(fill(verdict!.provider.web.url)).pathname, 'GET')).toEqual({ kind: 'poll', id })
    expect(id).toMatch(RUN_ID)
    expect(start!.provider.web.jsonPath).toBe('{$.state}')
    expect(['queued', 'running', 'done'].every((s) => holds(start!.successCondition, s))).toBe(true)
    // Polled while no verdict is there (each an Error, not counted in count) for longer than a run can take.
    expect(verdict!.provider.web.jsonPath).toBe('{$.verdict}')
    expect([verdict!.provider.web.method, verdict!.count]).toEqual(['GET', 1])
    expect(verdict!.consecutiveErrorLimit * parseDuration(verdict!.interval)!).toBeGreaterThan(heldAtMost())
    expect(parseDuration(verdict!.initialDelay!)).toBeGreaterThan(0)
    const phase = (v: string) =>
      holds(verdict!.successCondition, v) ? 'Successful' : holds(verdict!.failureCondition!, v) ? 'Failed' : 'Inconclusive'
    expect(Object.fromEntries(['green', 'red', 'error', 'inconclusive', 'interrupted'].map((v) => [v, phase(v)]))).toEqual({
      green: 'Successful',
      red: 'Failed',
      error: 'Failed',
      inconclusive: 'Inconclusive',
      interrupted: 'Inconclusive',
    })
    expect(verdict!.inconclusiveLimit).toBe(0)
    expect(template.args.map((a) => a.name)).toEqual(['svc', 'revision', 'serve-token'])
  })

  test('serve.yaml: the probes ask --metrics-listen, a listener of their own', () => {
    const opts = parseServeOptions(serveArgs().slice(1), {}, dir)
    const c = containersOf(find('Deployment', 'armproof-serve').spec as Record<string, unknown>)[0]! as Container & {
      ports: Array<{ name: string; containerPort: number }>
      livenessProbe: { httpGet: { path: string; port: string } }
      readinessProbe: { httpGet: { path: string; port: string } }
    }
    const probePort = c.ports.find((p) => p.name === c.livenessProbe.httpGet.port)!.containerPort
    expect([opts.ok && opts.options.metricsListen?.port, c.livenessProbe.httpGet.path, c.readinessProbe.httpGet.port]).toEqual([
      probePort,
      '/healthz',
      c.livenessProbe.httpGet.port,
    ])
    expect(route(c.livenessProbe.httpGet.path, 'GET')).toEqual({ kind: 'healthz' })
  })

  test('Flagger asks POST /verify/<svc> (the status route: it reads no body) and waits longer than a run may take', () => {
    const hooks = (
      find('Canary', 'llm-7').spec as { analysis: { webhooks: Array<{ url: string; timeout: string; metadata: Record<string, string> }> } }
    ).analysis.webhooks
    for (const h of hooks) {
      expect(route(new URL(h.url).pathname)).toEqual({ kind: 'run', answer: 'status', svc: 'llm-7' })
      expect(parseDuration(h.timeout)!).toBeGreaterThan(heldAtMost())
      expect(Object.keys(h.metadata)).toEqual(['token'])
    }
  })

  test("the Jobs' verify options are options armproof verify accepts (the Argo job's args and env, as a rollout fills them)", () => {
    const filled = {
      svc: 'llm-7',
      knob: 'PREFILL_INTERLEAVE',
      value: '1',
      previous: '0',
      'base-url': 'http://gpu-7:8000',
      host: 'deploy@gpu-7',
    }
    for (const m of [find('Job', 'armproof-llm-7'), find('AnalysisTemplate', 'armproof-job')]) {
      for (const spec of jobSpecs(m)) {
        const c = containersOf(spec)[0]!
        expect(c.args![0]).toBe('verify')
        const env = Object.fromEntries(
          (c.env ?? [])
            .filter((e) => e.value !== undefined)
            .map((e) => [e.name, e.value!.replace(/\{\{args\.([a-z-]+)\}\}/g, (_w, k: keyof typeof filled) => filled[k])]),
        )
        const config = loadConfig({ argv: c.args!.slice(1), env, cwd: dir })
        expect(config.ok ? config.target.svc : config.problems).toBe('llm-7')
      }
    }
  })

  test('the Indexed Job: JOB_COMPLETION_INDEX 0…N-1 gives --shard 1/N…N/N, which cover the fleet exactly once; the merge Job names every shard', () => {
    const job = find('Job', 'armproof-fleet').spec as { completions: number; parallelism: number; completionMode: string } & Record<
      string,
      unknown
    >
    expect(job.completionMode).toBe('Indexed')
    const c = containersOf(job)[0]!
    expect(c.command).toEqual(['/bin/sh', '-c'])
    // The container's own shell line, run by sh with `armproof` standing in as a script printing its argv.
    const bin = tempDir('armproof-k8s-bin-')
    writeFileSync(join(bin, 'armproof'), '#!/bin/sh\nprintf "%s\\n" "$@"\n')
    chmodSync(join(bin, 'armproof'), 0o755)
    const seen: string[] = []
    for (let index = 0; index < job.completions; index++) {
      const argv = execFileSync('/bin/sh', ['-c', c.args![0]!], {
        env: { PATH: `${bin}:/usr/bin:/bin`, JOB_COMPLETION_INDEX: String(index) },
        encoding: 'utf8',
      })
        .trimEnd()
        .split('\n')
      expect(argv.slice(0, 5)).toEqual(['verify', '--targets', '/config/targets.yaml', '--shard', `${index + 1}/${job.completions}`])
      const planned = planFleet({
        argv: [
          ...argv
            .slice(1)
            .map((a) => (a === '/config/targets.yaml' ? targetsFile : a))
            .filter((a) => !a.startsWith('/reports') && a !== '--report' && a !== '--junit'),
        ],
        env: { VERIFY_NO_DOTENV: '1' },
        cwd: dir,
      })
      expect(planned.ok).toBe(true)
      if (planned.ok) seen.push(...planned.plan.targets.map((t) => t.target.svc))
    }
    expect(seen.sort()).toEqual(['llm-10', 'llm-7', 'llm-8', 'llm-9'])
    expect(job.parallelism).toBe(job.completions)
    const merge = containersOf(find('Job', 'armproof-merge').spec as Record<string, unknown>)[0]!.args!
    expect(merge.filter((a) => /^\/reports\/shard-\d+\.json$/.test(a))).toEqual(
      Array.from({ length: job.completions }, (_, i) => `/reports/shard-${i + 1}.json`),
    )
  })
})
