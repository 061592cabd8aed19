// The example manifests (examples/k8s/) read as Kubernetes would take them, and checked by
// schema: the Kubernetes kinds against kubernetes-models' validators (generated from the
// Kubernetes 1.27 OpenAPI spec), Argo Rollouts' AnalysisTemplate against
// @kubernetes-models/argo-rollouts' (generated from Argo's CRD schemas), both from the npm
// registry. No npm package carries Flagger's CRD schema: a Canary is checked with ajv against
// FLAGGER_CANARY_SCHEMA below, written here from Flagger's documented Canary API, for the fields
// the example uses (what Flagger's CRD requires of them: types, the webhook types, required keys).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Ajv } from 'ajv'
import { parseAllDocuments } from 'yaml'
import { AnalysisTemplate } from '@kubernetes-models/argo-rollouts/argoproj.io/v1alpha1/AnalysisTemplate'
import { Deployment } from 'kubernetes-models/apps/v1/Deployment'
import { Job } from 'kubernetes-models/batch/v1/Job'
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap'
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim'
import { Service } from 'kubernetes-models/v1/Service'
import { ROOT } from './run-verify.ts'

export type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; [k: string]: unknown }

export function readManifests(file: string): Manifest[] {
  const docs = parseAllDocuments(readFileSync(join(ROOT, 'examples/k8s', file), 'utf8'))
  return docs.map((d) => {
    if (d.errors.length > 0) throw new Error(`${file}: ${d.errors[0]!.message}`)
    return d.toJS() as Manifest
  })
}

const NAME = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'

/** Flagger's Canary (flagger.app/v1beta1), the part the example uses: written from Flagger's documented API. */
export const FLAGGER_CANARY_SCHEMA = {
  type: 'object',
  required: ['apiVersion', 'kind', 'metadata', 'spec'],
  properties: {
    apiVersion: { const: 'flagger.app/v1beta1' },
    kind: { const: 'Canary' },
    metadata: {
      type: 'object',
      required: ['name'],
      properties: { name: { type: 'string', pattern: NAME, maxLength: 253 }, namespace: { type: 'string', pattern: NAME, maxLength: 63 } },
    },
    spec: {
      type: 'object',
      required: ['targetRef', 'analysis'],
      additionalProperties: false,
      properties: {
        targetRef: {
          type: 'object',
          required: ['apiVersion', 'kind', 'name'],
          additionalProperties: false,
          properties: { apiVersion: { type: 'string' }, kind: { enum: ['DaemonSet', 'Deployment', 'Service'] }, name: { type: 'string' } },
        },
        progressDeadlineSeconds: { type: 'number' },
        service: { type: 'object', required: ['port'], properties: { port: { type: 'number' } } },
        analysis: {
          type: 'object',
          additionalProperties: false,
          properties: {
            interval: { type: 'string', pattern: '^[0-9]+(ms|s|m|h)$' },
            threshold: { type: 'number' },
            iterations: { type: 'number' },
            webhooks: {
              type: 'array',
              items: {
                type: 'object',
                required: ['name', 'url'],
                additionalProperties: false,
                properties: {
                  name: { type: 'string' },
                  type: {
                    enum: [
                      'confirm-rollout',
                      'pre-rollout',
                      'rollout',
                      'confirm-traffic-increase',
                      'confirm-promotion',
                      'post-rollout',
                      'rollback',
                      'event',
                    ],
                  },
                  url: { type: 'string', pattern: '^https?://' },
                  timeout: { type: 'string', pattern: '^[0-9]+(ms|s|m|h)$' },
                  muteAlert: { type: 'boolean' },
                  retries: { type: 'number' },
                  metadata: { type: 'object', additionalProperties: { type: 'string' } },
                },
              },
            },
          },
        },
      },
    },
  },
} as const

const canary = new Ajv({ allErrors: true, strict: true }).compile(FLAGGER_CANARY_SCHEMA)

const MODELS: Record<string, { validate(): void } extends never ? never : new (data: never) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap as never,
  'v1/Service': Service as never,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim as never,
  'apps/v1/Deployment': Deployment as never,
  'batch/v1/Job': Job as never,
  'argoproj.io/v1alpha1/AnalysisTemplate': AnalysisTemplate as never,
}

/** The schema's complaints about one manifest (empty: valid); an unknown kind is a complaint too. */
export function schemaProblems(m: Manifest): string[] {
  const key = `${m.apiVersion}/${m.kind}`
  if (key === 'flagger.app/v1beta1/Canary') return canary(m) ? [] : (canary.errors ?? []).map((e) => `${e.instancePath} ${e.message}`)
  const Model = MODELS[key]
  if (!Model) return [`${key}: no schema here for this kind`]
  try {
    new Model(m as never).validate()
    return []
  } catch (error) {
    return [(error as Error).message]
  }
}

/** Every Job spec of a manifest: a Job's own, or an AnalysisTemplate's job metrics'. */
export function jobSpecs(m: Manifest): Array<Record<string, unknown>> {
  if (m.kind === 'Job') return [m.spec as Record<string, unknown>]
  if (m.kind !== 'AnalysisTemplate') return []
  const metrics = (m.spec as { metrics: Array<{ provider: { job?: { spec: Record<string, unknown> } } }> }).metrics
  return metrics.flatMap((x) => (x.provider.job ? [x.provider.job.spec] : []))
}
