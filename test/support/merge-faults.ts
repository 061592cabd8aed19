// The merge-reports rows of the fault table (docs/writeback-faults.md): shard reports made as
// `pnpm verify --targets FILE --shard i/n` makes them (test/support/shards.ts), harmed the way a
// CI pipeline or an attacker harms them, merged by the same mergeReports() bin/merge-reports.ts
// runs. Every refused merge must write nothing and say each problem on one line.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { mergeReports } from '../../helpers/fleet/merge.ts'
import type { FleetReport } from '../../helpers/fleet/report.ts'
import type { FaultRow, Outcome } from './fault-row.ts'
import { fleetTargets, shardReports, stepsWith, TARGETS_FILE } from './shards.ts'

type Doc = FleetReport & Record<string, unknown>

/** What is at `path`: nothing, a folder, or a file's text. */
function snapshot(path: string): string | null {
  if (!existsSync(path)) return null
  return statSync(path).isDirectory() ? '(a folder)' : readFileSync(path, 'utf8')
}

/** Writes `shards` into a temp folder and merges them with `args`; a refusal (exit 2) must leave neither output. */
async function merge(
  shards: readonly unknown[],
  args: (dir: string, shardPaths: string[]) => string[] = () => [],
  env: Record<string, string> = {},
): Promise<Outcome> {
  const dir = mkdtempSync(join(tmpdir(), 'armproof-merge-row-'))
  try {
    const paths = shards.map((s, k) => {
      const p = join(dir, `shard-${k + 1}.json`)
      writeFileSync(p, JSON.stringify(s, null, 2))
      return p
    })
    let out = ''
    let err = ''
    const extra = args(dir, paths)
    const outputs = [join(dir, 'merged.json'), join(dir, 'merged.xml')]
    const before = outputs.map(snapshot)
    const rawArgs = extra.includes('--out')
      ? [...extra, ...paths]
      : ['--out', join(dir, 'merged.json'), '--junit', join(dir, 'merged.xml'), ...extra, ...paths]
    const exit = await mergeReports({
      rawArgs,
      env,
      cwd: dir,
      out: { write: (t: string) => (out += t) },
      err: { write: (t: string) => (err += t) },
    })
    assert.doesNotMatch(`${out}${err}`, /^\s+at .+:\d+:\d+\)?$/m, 'a stack trace was printed')
    if (exit === 2) {
      assert.deepEqual(outputs.map(snapshot), before, 'a refused merge wrote an output')
      for (const line of err.trimEnd().split('\n').slice(1, -1)) assert.match(line, /^ {2}- \S.*$/, 'a problem is not one line')
    } else if (!extra.includes('--out')) {
      assert.ok(
        existsSync(join(dir, 'merged.json')) && existsSync(join(dir, 'merged.xml')),
        'a merge that went through did not write both outputs',
      )
    }
    return { exit, output: `${out}${err}` }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** A run of three targets at --value `value`, cut into `count` shards: the first target red at argv and ledger. */
const run = (value = '1', count = 2, file = TARGETS_FILE) =>
  shardReports(
    fleetTargets(3, value),
    [stepsWith({ argv: 'failed', ledger: 'failed', meter: 'failed' }), stepsWith(), stepsWith()],
    count,
    file,
  )
const copy = (r: FleetReport): Doc => structuredClone(r) as Doc
/** Shard `k` of a one-shard run with its first target's report patched by `edit`. */
function forged(edit: (report: Record<string, unknown>, shard: Doc) => void): Doc {
  const shard = copy(run('1', 1)[0]!)
  edit(shard.targets[0]!.report as unknown as Record<string, unknown>, shard)
  return shard
}

export const MERGE_FAULTS: readonly FaultRow[] = [
  {
    area: 'merge-reports',
    fault:
      "shard 1/2 left on a shared volume by yesterday's run (all green) beside shard 2/2 of today's, same targets file and options, each run named (--run-id, a Job's uid)",
    expected: "refused: another run of the same file (its run id); it once merged green, today's shard 1 never having run",
    exit: 2,
    message: 'another run of the same targets file and options (run id "job-41", not "job-42"): a shard left from an earlier run',
    run: () => {
      const green = [stepsWith(), stepsWith(), stepsWith()]
      return merge([
        copy(shardReports(fleetTargets(3, '1'), green, 2, TARGETS_FILE, 'job-42')[1]!),
        copy(shardReports(fleetTargets(3, '1'), green, 2, TARGETS_FILE, 'job-41')[0]!),
      ])
    },
  },
  {
    area: 'merge-reports',
    fault: 'the shards of one named run (--run-id)',
    expected: 'merged: the run id is part of the identity every shard carries',
    exit: 1,
    message: 'merged 2 shard report(s)',
    run: () =>
      merge(
        shardReports(
          fleetTargets(3, '1'),
          [stepsWith({ argv: 'failed', ledger: 'failed', meter: 'failed' }), stepsWith(), stepsWith()],
          2,
          TARGETS_FILE,
          'job-42',
        ).map(copy),
      ),
  },
  {
    area: 'merge-reports',
    fault: 'shard 2/2 of a --value 1 run merged with shard 1/2 of a --value 0 run of the same targets file',
    expected: "refused: not a shard of the same run (the run identity lists every target's options); nothing written",
    exit: 2,
    message: 'not a shard of the run of',
    run: () => merge([copy(run('0')[0]!), copy(run('1')[1]!)]),
  },
  {
    area: 'merge-reports',
    fault: 'a shard of an edited targets file beside a shard of the original',
    expected: 'refused: another targets file, by its sha256',
    exit: 2,
    message: 'another targets file (sha256',
    run: () => merge([copy(run()[0]!), copy(run('1', 2, `${TARGETS_FILE}# edited\n`)[1]!)]),
  },
  {
    area: 'merge-reports',
    fault: "a target saying verdict green and exit 0 (its shard's verdict too) while its argv and ledger failed",
    expected: 'refused: the verdict is derived again from its steps by the one green rule',
    exit: 2,
    message: 'says verdict "green", but its steps, notes and error give red',
    run: () =>
      merge([
        forged((r, shard) => {
          Object.assign(r, { verdict: 'green', exitCode: 0 })
          Object.assign(shard, { verdict: 'green', exitCode: 0 })
        }),
      ]),
  },
  {
    area: 'merge-reports',
    fault: 'a target\'s verdict "RED" (an unknown word once ranked as green)',
    expected: "refused: a verdict is one of the contract's words",
    exit: 2,
    message: 'verdict must be one of "green", "red", "inconclusive", "error", "interrupted", found "RED"',
    run: () =>
      merge([
        forged((r) => {
          r.verdict = 'RED'
        }),
      ]),
  },
  {
    area: 'merge-reports',
    fault: 'a target without a verdict',
    expected: 'refused in one line, no stack trace, nothing written (it once crashed after writing the merged JSON)',
    exit: 2,
    message: 'missing or malformed verdict',
    run: () =>
      merge([
        forged((r) => {
          delete r.verdict
        }),
      ]),
  },
  {
    area: 'merge-reports',
    fault: 'a target whose run identity was edited (its value, the id kept)',
    expected: 'refused: the id is the digest of its fields',
    exit: 2,
    message: 'its run identity was edited',
    run: () =>
      merge([
        forged((r) => {
          ;(r.run as { target: Record<string, unknown> }).target.value = '2'
        }),
      ]),
  },
  {
    area: 'merge-reports',
    fault: 'a shard given twice (shard 1/2 twice, 2/2 missing)',
    expected: 'refused: a repeated shard and a missing one, one line each',
    exit: 2,
    message: 'shard 1/2 is also in',
    async run() {
      const [a] = run()
      const o = await merge([copy(a!), copy(a!)])
      assert.match(o.output, /shard 2\/2 missing/)
      return o
    },
  },
  {
    area: 'merge-reports',
    fault: 'a shard missing (only 1/2 given)',
    expected: 'refused: the merged report would not hold the whole fleet',
    exit: 2,
    message: 'shard 2/2 missing',
    run: () => merge([copy(run()[0]!)]),
  },
  {
    area: 'merge-reports',
    fault: 'a shard written by an armproof without the run identity',
    expected: 'refused: re-run its shard with this armproof',
    exit: 2,
    message: 'carries no run identity',
    run: () =>
      merge([
        copy(run()[0]!),
        (() => {
          const s = copy(run()[1]!)
          delete (s.fleet as { run?: unknown }).run
          return s
        })(),
      ]),
  },
  {
    area: 'merge-reports',
    fault: 'an unwritable --junit (a folder)',
    expected: 'refused before anything is written: the merged JSON is not written either',
    exit: 2,
    message: '--junit: ',
    run: () =>
      merge(run().map(copy), (dir) => {
        mkdirSync(join(dir, 'merged.xml'))
        return ['--out', join(dir, 'merged.json'), '--junit', join(dir, 'merged.xml')]
      }),
  },
  {
    area: 'merge-reports',
    fault: '--out and --junit on one path',
    expected: 'refused: one would overwrite the other',
    exit: 2,
    message: '--out and --junit: both name',
    run: () => merge(run().map(copy), (dir) => ['--out', join(dir, 'merged.json'), '--junit', join(dir, 'merged.json')]),
  },
  {
    area: 'merge-reports',
    fault: "--junit a symlink to --out's path",
    expected: 'refused: one path once symlinks are resolved',
    exit: 2,
    message: 'are one path once symlinks are resolved',
    run: () =>
      merge(run().map(copy), (dir) => {
        writeFileSync(join(dir, 'merged.json'), '')
        symlinkSync(join(dir, 'merged.json'), join(dir, 'link.xml'))
        return ['--out', join(dir, 'merged.json'), '--junit', join(dir, 'link.xml')]
      }),
  },
  {
    area: 'merge-reports',
    fault: '--out over one of the shard reports it reads',
    expected: 'refused: writing it would destroy the input',
    exit: 2,
    message: 'which this run reads',
    run: () => merge(run().map(copy), (_dir, paths) => ['--out', paths[0]!]),
  },
  {
    area: 'merge-reports',
    fault: 'the shards of one run, each once',
    expected: "merged: every target once, in the file's order; exit = the worst verdict; the JSON and JUnit written",
    exit: 1,
    message: 'fleet RED, 3 target(s), exit 1',
    run: () => merge(run().map(copy)),
  },
]
