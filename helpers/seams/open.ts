// Chooses the seams (HTTP, host, clock, random choices) for a run's mode, once. The suites
// never know which mode they run in.
import { readFileSync } from 'node:fs'
import pkg from '../../package.json' with { type: 'json' }
import { realClock, type Clock } from './clock.ts'
import type { Target } from '../config/load.ts'
import { FIXTURE_FORMAT, recordedTarget } from './recording-files.ts'
import { readFixtures } from './recording.ts'
import { writeFixtures } from './fixture-write.ts'
import { createHost, type HostClient } from './host.ts'
import { readAhead, startReadsAhead, type Ahead } from './read-ahead.ts'
import { liveHttp, type HttpClient, type LiveHttpOptions } from './http.ts'
import { recordingSeams, scrubLocalPaths } from './record.ts'
import { redactingHost, redactingHttp } from './redact.ts'
import { ReplayLeftovers, replaySeams } from './replay.ts'
import { randomChoices, type Choices } from './choices.ts'

export interface Seams {
  http: HttpClient
  host: HostClient
  clock: Clock
  choices: Choices
  /**
   * Ends the run's I/O; in record mode writes the fixture set, with the verdicts the suite judged
   * (`judged`: so a recording made without pnpm verify, which notes the final verdict after, still
   * carries one to replay to).
   */
  close(extra?: { model?: string | null; judged?: { verdict: string; steps: Record<string, string> } }): Promise<void>
}

export const TOOL = { name: pkg.name, version: pkg.version }

/** The live client's options for a target: its --ca-file, and the origin its key belongs to (the base URL's). */
export function liveOptions(target: Target): LiveHttpOptions {
  return {
    ...(target.caFile ? { caPem: readFileSync(target.caFile, 'utf8') } : {}),
    ...(target.baseUrl ? { keyOrigin: new URL(target.baseUrl).origin } : {}),
  }
}

/** The live host client of a target (its key redacted from all it prints), and what names its host and access. */
export function liveHost(target: Target, hostEnv?: Record<string, string>): { host: HostClient; where: string } {
  const host = redactingHost(
    createHost({
      host: target.host,
      sshOpts: target.sshOpts,
      deployUser: target.deployUser,
      sudo: target.sudo,
      ...(hostEnv ? { env: hostEnv } : {}),
    }),
    target.apiKey,
  )
  return {
    host,
    where: JSON.stringify([target.host, target.sshOpts, target.deployUser, target.sudo, hostEnv ?? null, target.apiKey !== null]),
  }
}

/** Starts the host reads a live target's steps will ask for (`ahead`) now, for its run's seams to take (./read-ahead.ts). */
export function startHostReads(target: Target, ahead: Ahead, hostEnv?: Record<string, string>): () => void {
  if (target.mode === 'replay') return () => {}
  const live = liveHost(target, hostEnv)
  return startReadsAhead(live.where, live.host, ahead)
}

/**
 * `hostEnv`: extra environment for local host commands (the tests' reference engine puts its
 * shims on PATH); `ahead`: the host reads the steps will ask for, taken in one host call
 * (./read-ahead.ts) when the first is asked, or already under way (`startHostReads`).
 */
export async function openSeams(target: Target, options: { hostEnv?: Record<string, string>; ahead?: Ahead } = {}): Promise<Seams> {
  if (target.mode === 'replay') {
    const set = readFixtures(target.fixtures)
    const replay = replaySeams(set, target, target.fixtures)
    return {
      ...replay,
      // Every recorded exchange must have been asked for: one left over means the replay took another path.
      close: async () => {
        const left = replay.leftovers()
        if (left.length)
          throw new ReplayLeftovers(
            `the replay left ${left.length} recorded exchange${left.length === 1 ? '' : 's'} of ${target.fixtures} unused (${left.slice(0, 5).join('; ')}${left.length > 5 ? '; …' : ''}): it did not re-judge the recorded run; re-record it`,
          )
      },
    }
  }
  const live = liveHttp(liveOptions(target))
  // The key is redacted from all that comes back before anything (a step, a recording) reads it.
  const http = redactingHttp(live, target.apiKey)
  const own = liveHost(target, options.hostEnv)
  const host = readAhead(own.host, options.ahead ?? { reads: [], gathers: [] }, own.where)
  const choices = randomChoices()
  if (target.mode === 'live') return { http, host, clock: realClock, choices, close: () => live.close() }
  const rec = recordingSeams({ http, host, clock: realClock }, target.apiKey)
  return {
    http: rec.http,
    host: rec.host,
    clock: rec.clock,
    choices,
    async close(extra) {
      await live.close()
      const { recording } = rec
      writeFixtures(
        target.fixtures,
        {
          meta: {
            format: FIXTURE_FORMAT,
            svc: target.svc,
            knob: target.knob,
            value: target.value,
            previous: target.previous,
            baseUrl: target.baseUrl ?? '',
            host: host.where,
            model: extra?.model ?? target.model,
            recordedAt: new Date(recording.startedAtMs).toISOString(),
            tool: TOOL,
            choices: choices.made,
            clock: recording.clock,
            startedAtMs: recording.startedAtMs,
            // The baseline's record holds paths of this machine as the host reads did: scrubbed as they are, so the replay compares like with like.
            target: {
              ...recordedTarget(target),
              ...(target.baseline ? { baseline: JSON.parse(scrubLocalPaths(JSON.stringify(target.baseline))) as Target['baseline'] } : {}),
            },
            ...(extra?.judged ? { verdict: extra.judged.verdict, steps: extra.judged.steps } : {}),
          },
          http: recording.http,
          host: recording.host,
        },
        target.apiKey ? [target.apiKey] : [],
      )
    },
  }
}
