// A real Prometheus holding the effect's scenarios: the OpenMetrics text backfilled into TSDB blocks
// by Debian's promtool (`tsdb create-blocks-from openmetrics`), then served by Debian's prometheus
// on loopback (test/support/prometheus.ts) with nothing to scrape. One TSDB, one start, every
// scenario a target (instance) of its own.
//
// The text is the same from one run to the next (seeded), and promtool spends about a CPU-second
// on its 125k samples: the blocks it made of a text are kept in the temp folder under the text's
// hash, and a later run of the same text copies them (a changed scenario is another text, backfilled
// again; removing the folder does the same). Prometheus is always given a copy of its own: it writes
// its WAL and lock beside the blocks.
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cp, mkdtemp, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { promisify } from 'node:util'
import { startPrometheus, type PrometheusHandle } from '../support/prometheus.ts'
import { openMetrics, type Scenario } from './scenarios.ts'

const run = promisify(execFile)

/** The kept blocks' folders: `<prefix><16 hex of the text's sha256>` (test/support/temp-check.ts keeps them). */
const TSDB_CACHE_PREFIX = 'armproof-effect-tsdb-cache-'
/** Kept blocks of this many texts at most, the most recently used (a text that changed leaves its old blocks behind). */
const CACHE_KEEP = 3

export type BackfilledPrometheus = PrometheusHandle

export async function backfilledPrometheus(scenarios: readonly Scenario[]): Promise<BackfilledPrometheus> {
  const dir = await mkdtemp(join(tmpdir(), 'armproof-effect-tsdb-'))
  try {
    const text = openMetrics(scenarios)
    const data = join(dir, 'data')
    const cache = join(tmpdir(), TSDB_CACHE_PREFIX + createHash('sha256').update(text).digest('hex').slice(0, 16))
    if (!(await copied(cache, data))) {
      const input = join(dir, 'traffic.om.txt')
      await writeFile(input, text)
      // one thread: the same blocks for less CPU on a shared machine (Go's parallel GC spins otherwise)
      await run('promtool', ['tsdb', 'create-blocks-from', 'openmetrics', '--quiet', input, data], {
        maxBuffer: 16 * 1024 * 1024,
        env: { ...process.env, GOMAXPROCS: '1' },
      })
      await rm(input)
      await keep(data, cache)
    }
    await prune(cache)
    const prom = await startPrometheus({ targets: [], tsdb: data })
    return {
      ...prom,
      async stop() {
        await prom.stop()
        await rm(dir, { recursive: true, force: true })
      },
    }
  } catch (error) {
    await rm(dir, { recursive: true, force: true })
    throw error
  }
}

/** Beside the kept blocks: every file's size, so that a copy taken while another run pruned the folder is known short. */
const MANIFEST = 'armproof-blocks.json'

/** Every file under `dir` (but the manifest) with its size, by path relative to `dir`. */
async function sizes(dir: string): Promise<Record<string, number>> {
  const files = (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile() && e.name !== MANIFEST)
  const entries = await Promise.all(
    files.map(async (e) => [relative(dir, join(e.parentPath, e.name)), (await stat(join(e.parentPath, e.name))).size] as const),
  )
  return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : 1)))
}

/** Whether `dir` holds its manifest and every file the manifest names, of its size, and no other. */
async function whole(dir: string): Promise<boolean> {
  try {
    return (await readFile(join(dir, MANIFEST), 'utf8')) === JSON.stringify(await sizes(dir))
  } catch {
    return false
  }
}

/** The kept blocks copied to `data`, whole; false when there are none (or another run removed them meanwhile). */
async function copied(cache: string, data: string): Promise<boolean> {
  try {
    await cp(cache, data, { recursive: true, errorOnExist: true, force: false })
    if (await whole(data)) {
      await rm(join(data, MANIFEST))
      const now = new Date()
      await utimes(cache, now, now)
      return true
    }
  } catch {
    // none kept
  }
  await rm(data, { recursive: true, force: true })
  // kept blocks that do not match their manifest (or have none) make way for this run's
  if (existsSync(cache) && !(await whole(cache))) await rm(cache, { recursive: true, force: true })
  return false
}

/** promtool's blocks kept: copied beside the cache with their manifest, then renamed to it in one step (a run that reads it sees all or nothing). */
async function keep(data: string, cache: string): Promise<void> {
  const staging = `${cache}.${process.pid}-${Date.now()}`
  try {
    await cp(data, staging, { recursive: true })
    await writeFile(join(staging, MANIFEST), JSON.stringify(await sizes(data)))
    await rename(staging, cache)
  } catch {
    // another run kept the same blocks first, or the temp folder refused: the next run backfills
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
}

/** The kept blocks of other texts beyond the CACHE_KEEP most recently used, removed. */
async function prune(ours: string): Promise<void> {
  const names = (await readdir(tmpdir())).filter(
    (n) => n.startsWith(TSDB_CACHE_PREFIX) && /^[0-9a-f]{16}$/.test(n.slice(TSDB_CACHE_PREFIX.length)),
  )
  const used = await Promise.all(
    names.map(async (n) => ({
      path: join(tmpdir(), n),
      at: await stat(join(tmpdir(), n)).then(
        (s) => s.mtimeMs,
        () => 0,
      ),
    })),
  )
  used.sort((a, b) => b.at - a.at)
  for (const old of used.slice(CACHE_KEEP)) if (old.path !== ours) await rm(old.path, { recursive: true, force: true })
}
