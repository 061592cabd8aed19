// One `node bin/verify.ts` run as a child for the fleet measures: its wall time, the peak RSS of
// its process tree sampled every 100 ms from /proc (armproof's own process, the spawner it starts,
// and the host commands), and, when asked, every host call it made (a `sh` on PATH ahead of the
// real one notes each `sh -c` armproof starts, by what it runs, then runs the real sh).
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { execa } from 'execa'
import { startEngine, type EngineHandle } from '../../engine/launch.ts'
import type { FleetMember } from '../../engine/fleet.ts'
import { ROOT } from '../../test/support/run-verify.ts'

const PAGE = 4096

export interface TreePeak {
  /** verify's own process (the arm suite runs in it). */
  ownMiB: number
  /** The spawner it starts for host commands (helpers/seams/spawner.ts). */
  spawnerMiB: number
  /** Every process of the tree, host commands included. */
  allMiB: number
}

function sample(pid: number): TreePeak {
  const parent = new Map<number, number>()
  const rss = new Map<number, number>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      parent.set(Number(name), Number(fields[1]))
      rss.set(Number(name), Number(fields[21]) * PAGE)
    } catch {
      // gone meanwhile
    }
  }
  const inTree = (p: number): boolean => {
    for (let q = p, n = 0; q > 1 && n < 64; q = parent.get(q) ?? 0, n++) if (q === pid) return true
    return false
  }
  const peak: TreePeak = { ownMiB: 0, spawnerMiB: 0, allMiB: 0 }
  for (const [p, bytes] of rss) {
    if (!inTree(p)) continue
    const mib = bytes / 2 ** 20
    peak.allMiB += mib
    if (p === pid) peak.ownMiB += mib
    else {
      let cmd = ''
      try {
        cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8')
      } catch {
        // gone meanwhile
      }
      if (cmd.includes('helpers/seams/spawner')) peak.spawnerMiB += mib
    }
  }
  return peak
}

/** Where the counting `sh` notes each host call: its kind, one per line. */
export function countingShell(dir: string): { env: Record<string, string>; calls(): Record<string, number>; reset(): void } {
  const bin = join(dir, 'count-bin')
  const log = join(dir, 'sh-calls.log')
  if (!existsSync(bin)) mkdirSync(bin)
  writeFileSync(
    join(bin, 'sh'),
    `#!/bin/sh
if [ "$1" = -c ]; then
  case "$2" in
    *'@@ap-'*) k=batch ;;
    *'F0=$(pidof'*) k=shared-survey ;;
    *'getconf CLK_TCK'*) k=survey ;;
    *) k=other ;;
  esac
  echo "$k" >> '${log}'
fi
exec /bin/sh "$@"
`,
  )
  chmodSync(join(bin, 'sh'), 0o755)
  return {
    env: { PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}` },
    calls() {
      const counts: Record<string, number> = {}
      if (!existsSync(log)) return counts
      for (const k of readFileSync(log, 'utf8').split('\n').filter(Boolean)) counts[k] = (counts[k] ?? 0) + 1
      return counts
    },
    reset: () => writeFileSync(log, ''),
  }
}

export interface VerifyRun {
  ms: number
  peak: TreePeak
  exitCode: number
  stdout: string
}

/** `node bin/verify.ts args…` as a child; its wall time and the peak RSS of its process tree. */
export async function timedVerify(args: readonly string[], env: Record<string, string> = {}): Promise<VerifyRun> {
  const started = performance.now()
  const child = execa(process.execPath, [join(ROOT, 'bin/verify.ts'), ...args], {
    cwd: ROOT,
    reject: false,
    env: { CI: 'true', VERIFY_NO_DOTENV: '1', ...env },
    stdin: 'ignore',
    timeout: 600_000,
  })
  const peak: TreePeak = { ownMiB: 0, spawnerMiB: 0, allMiB: 0 }
  const timer = setInterval(() => {
    if (!child.pid) return
    const now = sample(child.pid)
    peak.ownMiB = Math.max(peak.ownMiB, now.ownMiB)
    peak.spawnerMiB = Math.max(peak.spawnerMiB, now.spawnerMiB)
    peak.allMiB = Math.max(peak.allMiB, now.allMiB)
  }, 100)
  const r = await child
  clearInterval(timer)
  return { ms: performance.now() - started, peak, exitCode: r.exitCode ?? -1, stdout: String(r.stdout) }
}

/** The options of every measured run (the host timeouts and budgets generous: a loaded shared machine must not turn a slow run red). */
export const FLAGS = [
  '--knob',
  'PREFILL_INTERLEAVE',
  '--value',
  '1',
  '--host',
  'local',
  '--no-dropin-check',
  '--meter-window',
  '2s',
  '--health-budget',
  '30s',
  '--probe-timeout',
  '60s',
  '--host-timeout',
  '30s',
]

/** A fleet of `size` engines in one process, named after its size (no two fleets up at once share a name: each run's survey finds only its own). */
export function fleetEngine(size: number, latencyMs: number): Promise<EngineHandle> {
  return startEngine({
    svc: `perf-fleet${size}`,
    processName: `rpf-${size}`,
    args: ['--prefill-interleave', '1', '--completion-latency-ms', String(latencyMs), '--load-closed-ms', '0', '--load-503-ms', '0'],
    fleet: size,
  })
}

/** One member alone on the command line: the flags its targets-file entry holds. */
export function memberArgv(engine: EngineHandle, m: FleetMember): string[] {
  return Object.entries(memberEntry(engine, m)).flatMap(([key, value]) => [`--${key}`, value])
}

/** A member as a targets-file entry (its host commands through the fleet's shims). */
export function memberEntry(engine: EngineHandle, m: FleetMember, extra: Record<string, string> = {}): Record<string, string> {
  return {
    svc: m.svc,
    'base-url': m.baseUrl,
    process: engine.processName,
    'ledger-cmd': `${engine.binDir}/podman logs --tail 100000 {svc}`,
    'help-cmd': `${engine.binDir}/podman exec {svc} radiance --help`,
    ...extra,
  }
}
