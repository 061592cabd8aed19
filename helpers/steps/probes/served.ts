// What the three probes share: the model they probe (--model, else the first id of /v1/models,
// asked once by the first probe that gets that far, never when /health did not come up), the
// cards /v1/models lists (the names one served model goes by), and each probe's reply id, so that
// one reply handed to distinct requests is seen by every probe that got it. The meter reads the model too.
// What /v1/models shows the operator got wrong (first contact's rule) blocks every probe: ../mistake.ts.
import { HttpError } from '../../seams/http.ts'
import { modelCards, type ModelCard } from '../../seams/models.ts'
import { STEP_IDS, type StepId } from '../registry.ts'
import { endpointUrl, v1Headers, type RunContext, type ServedModel } from '../context.ts'
import { ProbeBlocked, withRetries } from './ask.ts'
import { errorMessage } from './reply.ts'
import { fromModels, type FirstContactProblem } from '../first-contact/answers.ts'
import { mistaken } from '../mistake.ts'
import type { Judgement } from '../verdict.ts'

/** The probes that run side by side and settle their reply ids with each other. */
const PROBES: readonly StepId[] = STEP_IDS.filter((id) => id.startsWith('probe.'))

/** `probes`: those that settle reply ids with each other (a probe judged alone settles with itself only). */
export function servedModel(ctx: RunContext, probes: readonly StepId[] = PROBES): ServedModel {
  let asked: Promise<ModelsAnswer> | undefined
  const list = (): Promise<ModelsAnswer> => (asked ??= askModels(ctx))
  // A probe skipped on purpose (--skip) is never judged: it has no reply, settled here for it, so
  // the others never wait for its id.
  const ids = new Map<StepId, string | null>(probes.filter((p) => (ctx.target.skip as readonly string[]).includes(p)).map((p) => [p, null]))
  let everyone: () => void = () => {}
  const settledAll = new Promise<void>((resolve) => (everyone = resolve))
  return {
    get: () =>
      ctx.target.model
        ? Promise.resolve(ctx.target.model)
        : list().then((a) => {
            if (a.blocked) throw new ProbeBlocked(a.blocked)
            return a.cards![0]!.id
          }),
    settled: async () =>
      ctx.target.model
        ? ctx.target.model
        : asked
          ? asked.then(
              (a) => (a.blocked ? undefined : a.cards?.[0]?.id),
              () => undefined,
            )
          : undefined,
    cards: () =>
      list().then(
        (a) => (a.cards && a.cards.length > 0 ? a.cards : undefined),
        () => undefined,
      ),
    mistake: () =>
      list().then(
        (a) => a.mistake,
        () => undefined,
      ),
    replyId(probe, id) {
      if (!ids.has(probe)) ids.set(probe, id)
      if (probes.every((p) => ids.has(p))) everyone()
      // Every probe settles its id (null when it got no reply) exactly once, even when it ends
      // early; the wait is bounded all the same, by the probe timeout, should one never run.
      const wait = new Promise<void>((resolve) => {
        // Not unref'd: the run waits on it (a probe that never settles must not end the process).
        const timer = setTimeout(resolve, ctx.target.probeTimeoutMs)
        void settledAll.then(() => (clearTimeout(timer), resolve()))
      })
      const mine = ids.get(probe)!
      return wait.then(() => (mine === null ? [] : [...ids].filter(([p, other]) => p !== probe && other === mine).map(([p]) => p)))
    },
  }
}

/**
 * What /v1/models answered: its cards (undefined: none could be read), the judgement that blocks a
 * probe needing the first id when it names none, and an operator's mistake it shows (first
 * contact's rule: the key, the path, a redirect to another origin, a --model it does not list).
 */
interface ModelsAnswer {
  cards: ModelCard[] | undefined
  blocked?: Judgement
  mistake?: FirstContactProblem
}

/** /v1/models, asked through the run's seam (recorded, replayed); never rejects for an HTTP failure. */
async function askModels(ctx: RunContext): Promise<ModelsAnswer> {
  const url = endpointUrl(ctx, '/v1/models')
  const where = `GET ${url}`
  const expected = 'a model id from /v1/models'
  try {
    const { res } = await withRetries(ctx, {
      method: 'GET',
      url,
      headers: v1Headers(ctx),
      timeoutMs: Math.min(30_000, ctx.target.probeTimeoutMs),
    })
    const cards = res.status === 200 ? modelCards(res.body) : undefined
    const observed = res.status === 200 ? `no model id in ${res.body.slice(0, 200)}` : `HTTP ${res.status}: ${errorMessage(res.body)}`
    const mistake = fromModels(res, ctx.target, where)
    if (mistake) return { cards, mistake, blocked: mistaken(mistake, { expected, observed, evidence: { status: res.status } }) }
    if (cards && cards.length > 0) return { cards }
    return {
      cards,
      blocked: {
        verdict: 'failed',
        expected,
        observed,
        where,
        next: 'pass --model <id> explicitly, or check --base-url',
        evidence: { status: res.status },
      },
    }
  } catch (error) {
    if (!(error instanceof HttpError)) throw error
    return {
      cards: undefined,
      blocked: {
        verdict: 'inconclusive',
        expected,
        observed: error.message,
        where,
        next: 'the endpoint stopped answering after /health: check it, then run again',
        evidence: {},
      },
    }
  }
}
