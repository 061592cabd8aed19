// A step judge called directly: the target from a command line (as `pnpm verify` reads it), and a
// RunContext whose host answers each command from a function, keeping every request it was sent,
// and whose HTTP refuses (the host-side steps send nothing).
import { loadConfig, type Target } from '../../helpers/config/load.ts'
import type { HostClient, HostResult, HostRun } from '../../helpers/seams/host.ts'
import { createContext, type RunContext } from '../../helpers/steps/context.ts'

/** The target `pnpm verify --svc llm-7 --base-url http://127.0.0.1:8000 …args` reads (an operator's mistake throws). */
export function stepTarget(args: readonly string[]): Target {
  const r = loadConfig({ argv: ['--svc', 'llm-7', '--base-url', 'http://127.0.0.1:8000', ...args], env: {} })
  if (!r.ok) throw new Error(r.problems.map((p) => p.message).join('\n'))
  return r.target
}

/** What a host answers to one command: its output and status, or a failure to run it. */
export type HostAnswer = Partial<Omit<HostResult, 'command' | 'durationMs'>>

/** A host answering every command with `answer(request)`; `calls` keeps each request. */
export function answeringHost(answer: (req: HostRun) => HostAnswer, where = 'local'): HostClient & { calls: HostRun[] } {
  const calls: HostRun[] = []
  return {
    where,
    calls,
    async run(req) {
      calls.push(req)
      return { command: req.script, stdout: '', stderr: '', exitCode: 0, durationMs: 1, ...answer(req) }
    },
  }
}

/** The context one run's steps see, for `target` on `host`. */
export function stepContext(target: Target, host: HostClient): RunContext {
  return createContext({
    target,
    http: { request: (req) => Promise.reject(new Error(`no HTTP in a host-side step's test: ${req.url}`)) },
    host,
    clock: { now: () => 0, sleep: async () => {} },
    choices: { pick: (_n, o) => o[0]! },
  })
}
