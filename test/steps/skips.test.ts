// Skips a run declares: `--skip` (a probe the served model cannot take) and a runtime with no unit
// for the drop-in gate. Each is shown skipped with its reason and marked intendedSkip, never
// passed; the judge of a skipped probe is never called and sends nothing, and the other probes do
// not wait for its reply id; the green rule allows exactly the declared ones. A 400 saying the
// model takes no images names --skip probe.vision; one about anything else does not.
import { describe, expect, test } from 'vitest'
import { loadConfig, type Target } from '../../helpers/config/load.ts'
import type { HostClient } from '../../helpers/seams/host.ts'
import type { HttpClient } from '../../helpers/seams/http.ts'
import { createContext, type RunContext } from '../../helpers/steps/context.ts'
import { checkDropins } from '../../helpers/steps/dropins/judge.ts'
import { judgeStep, proofRun } from '../../helpers/steps/judges.ts'
import { servedModel } from '../../helpers/steps/probes/served.ts'
import { judgeVision } from '../../helpers/steps/probes/vision.ts'
import { judgeTools } from '../../helpers/steps/probes/tools.ts'
import { runtimeHint } from '../../helpers/steps/_runtime.ts'
import { LATER_STEPS, STEP_IDS, allowedSkips, declaredSkips, judgeRun, runVerdict, type StepLike } from '../../helpers/steps/verdict.ts'
import { requiredSteps } from '../../helpers/report/checked.ts'
import { knob } from '../../helpers/config/knobs.ts'

function target(extra: string[]): Target {
  const r = loadConfig({
    argv: ['--svc', 'llm-7', '--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--base-url', 'http://127.0.0.1:8000', ...extra],
    env: {},
  })
  if (!r.ok) throw new Error(r.problems.map((p) => p.message).join('\n'))
  return r.target
}

const sent: string[] = []
const http: HttpClient = { request: (req) => (sent.push(req.url), Promise.reject(new Error(`no HTTP in this test: ${req.url}`))) }
const ran: string[] = []
const host: HostClient = { where: 'local', run: (req) => (ran.push(req.script), Promise.reject(new Error('no host in this test'))) }
const ctxOf = (t: Target): RunContext =>
  createContext({ target: t, http, host, clock: { now: () => 0, sleep: async () => {} }, choices: { pick: (_n, o) => o[0]! } })

describe('a probe skipped with --skip', () => {
  test('is skipped on purpose with its reason; its judge is never called, nothing is sent', async () => {
    const run = proofRun(ctxOf(target(['--skip', 'probe.vision,probe.tools'])))
    sent.length = 0
    for (const id of ['probe.vision', 'probe.tools'] as const) {
      const r = await judgeStep(run, id, id)
      expect([r.verdict, r.intendedSkip, r.observed]).toEqual([
        'skipped',
        true,
        `not run: --skip ${id} was given: ${id === 'probe.vision' ? 'the served model takes no images (a text-only model)' : 'the endpoint serves no tool calls (no tool parser configured)'}`,
      ])
      expect(r.next).toContain(`without --skip ${id}`)
    }
    expect(sent).toEqual([])
  })

  test('settles its reply id up front: the probes that do run never wait for it', async () => {
    const served = servedModel(ctxOf(target(['--skip', 'probe.vision', '--probe-timeout', '10m'])))
    const waiting = Symbol('waiting')
    const tools = served.replyId('probe.tools', 'chatcmpl-b')
    const exact = served.replyId('probe.exact', 'chatcmpl-a')
    // Resolved within the same turn of the event loop, not after the 10-minute probe timeout.
    const settled = await Promise.race([Promise.all([exact, tools]), new Promise((r) => setImmediate(() => r(waiting)))])
    expect(settled).toEqual([[], []])
    // Without the skip, the same two wait for the vision probe's id.
    const all = servedModel(ctxOf(target(['--probe-timeout', '10m'])))
    void all.replyId('probe.tools', 'chatcmpl-b')
    const still = await Promise.race([all.replyId('probe.exact', 'chatcmpl-a'), new Promise((r) => setImmediate(() => r(waiting)))])
    expect(still).toBe(waiting)
    void all.replyId('probe.vision', null)
  })

  test('the green rule allows exactly the skips declared: a skip the run did not declare is not green', () => {
    const steps = (skipped: string[]): StepLike[] =>
      STEP_IDS.map((id) => ({
        id,
        verdict: skipped.includes(id) ? 'skipped' : 'passed',
        ...(skipped.includes(id) ? { intendedSkip: true } : {}),
      }))
    const proof = knob('PREFILL_INTERLEAVE').proof
    const declared = declaredSkips(target(['--skip', 'probe.vision']))
    expect(runVerdict(steps(['probe.vision']), allowedSkips(proof, declared))).toBe('green')
    expect(runVerdict(steps(['probe.vision', 'probe.tools']), allowedSkips(proof, declared))).toBe('inconclusive')
    expect(runVerdict(steps(['probe.vision']), allowedSkips(proof, declaredSkips(target([]))))).toBe('inconclusive')
  })

  test("the one-flag law's step may be skipped on purpose (no earlier record), never unmarked; failed is red; missing only from a report before the law", () => {
    const proof = knob('PREFILL_INTERLEAVE').proof
    const allowed = allowedSkips(proof, [])
    const all = (oneFlag: StepLike | null): StepLike[] => [
      ...STEP_IDS.filter((id) => id !== 'one-flag').map((id): StepLike => ({ id, verdict: 'passed' })),
      ...(oneFlag ? [oneFlag] : []),
    ]
    expect(runVerdict(all({ id: 'one-flag', verdict: 'skipped', intendedSkip: true }), allowed)).toBe('green')
    expect(runVerdict(all({ id: 'one-flag', verdict: 'skipped' }), allowed)).toBe('inconclusive')
    expect(runVerdict(all({ id: 'one-flag', verdict: 'failed' }), allowed)).toBe('red')
    expect(runVerdict(all({ id: 'one-flag', verdict: 'inconclusive' }), allowed)).toBe('inconclusive')
    // Missing: never green by verify's rule; a report read back is judged without it only when written before the law.
    expect(judgeRun({ steps: all(null), allowed }).why).toEqual([{ kind: 'missing', ids: ['one-flag'] }])
    expect(judgeRun({ steps: all(null), allowed, required: STEP_IDS.filter((id) => !LATER_STEPS.includes(id)) }).verdict).toBe('green')
    const steps = all(null)
    expect(requiredSteps({ steps, run: undefined })).not.toContain('one-flag')
    expect(requiredSteps({ steps, run: { id: '0'.repeat(64), mode: 'live', skips: [], target: {} } })).not.toContain('one-flag')
    expect(requiredSteps({ steps, run: { id: '0'.repeat(64), mode: 'live', skips: [], target: { baseline: null } } })).toContain('one-flag')
  })
})

describe('a 400 that says the model takes no images names --skip probe.vision', () => {
  const error = (status: number, body: unknown) => judgeVision(status, JSON.stringify(body), 'red', 'blue')
  test.each([
    [
      'vLLM ≥ 0.10.1, a text-only model',
      400,
      { error: { message: 'facebook/opt-125m is not a multimodal model None', type: 'BadRequestError', param: null, code: 400 } },
    ],
    [
      'vLLM before 0.10.1 (the flat shape)',
      400,
      { object: 'error', message: 'facebook/opt-125m is not a multimodal model None', type: 'BadRequestError', param: null, code: 400 },
    ],
    [
      'vLLM, a VLM served text-only (limit 0)',
      400,
      { error: { message: 'At most 0 image(s) may be provided in one prompt.', type: 'BadRequestError', param: null, code: 400 } },
    ],
    [
      'OpenAI, a model without vision',
      400,
      {
        error: {
          message: 'Invalid content type. image_url is only supported by certain models.',
          type: 'invalid_request_error',
          param: 'messages.[0].content.[1].type',
          code: null,
        },
      },
    ],
    [
      'llama.cpp without --mmproj (HTTP 500)',
      500,
      {
        error: {
          code: 500,
          message: 'image input is not supported - hint: if this is unexpected, you may need to provide the mmproj',
          type: 'server_error',
        },
      },
    ],
  ])('%s', (_what, status, body) => {
    const r = error(status, body)
    expect(r.verdict).toBe('failed')
    expect(r.next).toContain('run again with --skip probe.vision')
  })

  test('other refusals of the request do not', () => {
    const r = error(400, {
      error: {
        message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens. None",
        type: 'BadRequestError',
        param: null,
        code: 400,
      },
    })
    expect(r.next).not.toContain('--skip')
    expect(
      error(400, {
        error: { message: 'At most 1 image(s) may be provided in one prompt.', type: 'BadRequestError', param: null, code: 400 },
      }).next,
    ).not.toContain('--skip')
    expect(error(500, { error: { message: 'engine overloaded', type: 'server_error', code: 500 } }).next).not.toContain('--skip')
  })

  test('a tools request refused for want of a tool parser names --skip probe.tools too', () => {
    const r = judgeTools(
      400,
      JSON.stringify({
        error: {
          message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
          type: 'BadRequestError',
          param: null,
          code: 400,
        },
      }),
      'kestrel',
    )
    expect(r.next).toContain('--skip probe.tools')
  })
})

describe('the drop-in gate of a runtime with no unit', () => {
  test.each([
    ['kubernetes', ['--runtime', 'kubernetes'], 'a Kubernetes pod has no systemd unit', 'kubectl get pod <pod> -o yaml'],
    ['docker', ['--runtime', 'docker'], 'a docker container is not a systemd unit', 'give --unit <unit>'],
    [
      'process',
      ['--runtime', 'process', '--ledger-cmd', 'cat /var/log/radiance.log'],
      'a bare process without a unit',
      'give --unit <unit>',
    ],
  ])('%s: skipped on purpose with why, no command run, and declared', async (_runtime, args, why, next) => {
    ran.length = 0
    const t = target(args)
    const j = await checkDropins(ctxOf(t))
    expect([j.verdict, j.intendedSkip]).toEqual(['skipped', true])
    expect(j.observed).toContain(`not applicable: ${why}`)
    expect(j.next).toContain(next)
    expect(ran).toEqual([])
    expect(declaredSkips(t)).toContain('dropins')
  })
})

describe("the runtime's own words become the next step of the ledger and --help", () => {
  const hint = (args: string[], output: string) => runtimeHint(ctxOf(target(args)), output)
  test('each runtime reads only its own tool', () => {
    expect(hint([], 'Error: no container with name or ID "llm-7" found: no such container')).toContain(
      'rootless podman storage is per user',
    )
    expect(hint(['--runtime', 'docker'], 'Error response from daemon: No such container: llm-7')).toContain(
      'docker knows no container llm-7',
    )
    expect(hint(['--runtime', 'docker'], 'Error response from daemon: container 4f2a is not running')).toContain('docker start llm-7')
    expect(hint(['--runtime', 'docker'], 'Error: no container with name or ID "llm-7" found')).toBeUndefined()
    expect(hint(['--runtime', 'kubernetes', '--host', 'llm/llm-7-0'], 'Error from server (NotFound): pods "llm-7-0" not found')).toContain(
      'kubectl get pods -n llm',
    )
    expect(
      hint(['--runtime', 'kubernetes', '--host', 'llm/llm-7-0'], 'error: unable to upgrade connection: container not found ("engine")'),
    ).toContain('kubectl describe pod llm-7-0 -n llm')
    expect(hint(['--runtime', 'kubernetes'], 'radiance: error: unrecognized arguments')).toBeUndefined()
    expect(hint(['--runtime', 'process', '--unit', 'x'], 'No such container')).toBeUndefined()
  })
})
