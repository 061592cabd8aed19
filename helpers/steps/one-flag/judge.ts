// Step `one-flag`: the runbook's law, "one flag changed, one service deployed", after the deploy.
// The engine as it runs now (./read.ts: its whole resolved command line, env twins included, its
// binary or image, its served model) against the last green record of the service (the target's
// baseline, read before contact: helpers/config/baseline.ts) must differ in the knob's flag (and
// its env twin) alone. Anything else that differs is named with both values, and the step is red:
// two changes, the arm cannot be credited. Skipped, saying why, where there is no earlier record;
// the record read now is kept in the evidence either way (the next arm's baseline).
import { asArmRecord, recordChanges, type ArmRecord } from '../../config/arm-record.ts'
import { knobRecordNames } from './names.ts'
import { command } from '../../config/invocation.ts'
import type { InputsOf, Outcome, RunContext } from '../context.ts'
import type { OneFlagEvidence } from './evidence.ts'
import { readRecord } from './read.ts'

function knobText(r: ArmRecord, names: readonly string[]): string {
  const given = names.filter((n) => r.flags[n] !== undefined).map((n) => (r.flags[n] === '' ? n : `${n}=${r.flags[n]}`))
  return given.length ? given.join(' ') : 'absent'
}

export async function checkOneFlag(ctx: RunContext, inputs: InputsOf<'one-flag'>): Promise<Outcome<'one-flag'>> {
  const expected = `only ${ctx.spec.flag}${ctx.spec.envTwin ? ` (or ${ctx.spec.envTwin})` : ''} differs from the last green record of ${ctx.target.svc}: the same command line otherwise, the same binary or image, the same served model`
  const baseline = ctx.target.baseline
  const svc = ctx.target.svc
  const keepNext = `keep this run's report (--report) and pass it to the next arm's verify as --baseline-report, or write it into the vault (${command('writeback')} --report FILE --vault DIR) and pass --vault DIR`
  if (baseline === undefined)
    return {
      verdict: 'skipped',
      intendedSkip: true,
      expected,
      observed:
        'not judged: this run was recorded by an armproof before the one-flag law, and its recording holds no baseline nor the reads',
      where: 'the recording',
      next: `record the run again with this armproof (${command('verify')} … --mode record)`,
      evidence: {},
    }
  const read = await readRecord(ctx, inputs)
  const kept: OneFlagEvidence =
    'record' in read ? { record: read.record, ...(read.unlisted.length ? { unlisted: read.unlisted } : {}) } : {}
  if (baseline === null || baseline.record === null) {
    const why =
      baseline === null ? 'neither --baseline-report nor --vault was given' : `${baseline.from}: ${baseline.why ?? 'it holds no record'}`
    if (baseline?.untrusted)
      return {
        verdict: 'inconclusive',
        expected,
        observed: `the baseline cannot be trusted: ${why}`,
        where: baseline.from,
        next: `restore the entry as ${command('writeback')} wrote it, or pass the last green report of ${svc} as --baseline-report`,
        evidence: { ...kept, baseline: { from: baseline.from, finishedAt: baseline.finishedAt } },
      }
    const unread =
      'unread' in read
        ? `; the engine's record could not be read either (${read.unread.observed}), so the next arm will have no baseline from this run`
        : ''
    return {
      verdict: 'skipped',
      intendedSkip: true,
      expected,
      observed: `no earlier record of ${svc} to compare with: ${why}${unread}`,
      where: baseline?.from ?? ('where' in read ? read.where : read.unread.where),
      next: `this run's record is the next arm's baseline: ${keepNext}`,
      evidence: { ...kept, ...(baseline ? { baseline: { from: baseline.from, finishedAt: baseline.finishedAt } } : {}) },
    }
  }
  const shownBaseline = { from: baseline.from, finishedAt: baseline.finishedAt }
  if ('unread' in read) {
    const u = read.unread
    return {
      verdict: 'inconclusive',
      expected,
      observed: `the engine's command line, binary or model could not be read: ${u.observed}`,
      where: u.where,
      next: u.next,
      evidence: { ...(u.trouble?.evidence ?? {}), baseline: shownBaseline },
    }
  }
  const before = asArmRecord(baseline.record)
  if (before === null)
    return {
      verdict: 'inconclusive',
      expected,
      observed: `the baseline's record is malformed (${baseline.from})`,
      where: baseline.from,
      next: `pass the last green report of ${svc} as --baseline-report`,
      evidence: { ...kept, baseline: shownBaseline },
    }
  const names = knobRecordNames(ctx.spec, ctx.engine.parser)
  const changes = recordChanges(before, read.record, names)
  const knob = { before: knobText(before, names), now: knobText(read.record, names) }
  const against = `${baseline.from}${baseline.finishedAt ? `, finished ${baseline.finishedAt}` : ''}`
  const evidence: OneFlagEvidence = { ...kept, baseline: shownBaseline, changes, knob }
  if (changes.length === 0)
    return {
      verdict: 'passed',
      expected,
      observed: `only the knob differs from the last green record (${against}): ${knob.before === knob.now ? `${knob.now}, as then` : `${knob.before} → ${knob.now}`}; command line, binary${read.record.image ? ', image' : ''} and model ${read.record.model ?? '(not read)'} as then`,
      where: read.where,
      evidence,
    }
  return {
    verdict: 'failed',
    expected,
    observed: `two changes: the arm cannot be credited. Besides the knob (${knob.before} → ${knob.now}), ${changes.length} other difference${changes.length === 1 ? '' : 's'} from the last green record (${against}): ${changes.map((c) => `${c.what}: ${c.before} → ${c.now}`).join('; ')}`,
    where: read.where,
    next: `deploy one change at a time: put back ${changes.map((c) => c.what).join(', ')} as the record has ${changes.length === 1 ? 'it' : 'them'} and redeploy --service ${svc} with only ${ctx.spec.env} changed; or, if the other change is meant, verify it on its own first (its green report is then the baseline), then arm ${ctx.spec.env} again`,
    evidence,
  }
}
