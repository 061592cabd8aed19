// Many writeback processes on one page at once. `race` forks `writers` worker processes once and
// runs `rounds` rounds: each round gets a fresh page, every worker writes its own green report to
// it at the same moment, and the page must then hold every entry of every writer that exited 0.
// `cliRace` does one round with `node bin/writeback.ts` itself, one process per writer, all of them
// waiting on the page's held lock before it is released.
// A race's processes share a compile cache (NODE_COMPILE_CACHE: the suite's, see vitest.config.ts,
// else a temp folder of the race), and one process starts first and fills it: the others skip
// stripping and compiling the same TypeScript modules again, even on a first run; what they run is
// the same code.
import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, watch } from 'node:fs'
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'
import { entryMarker } from '../../helpers/writeback/entry.ts'
import { lockPathOf } from '../../helpers/writeback/lock.ts'
import { greenReport, PAGE } from './writeback-sandbox.ts'

const WORKER = fileURLToPath(new URL('./writeback-worker.ts', import.meta.url))
const BIN = fileURLToPath(new URL('../../bin/writeback.ts', import.meta.url))

export interface RaceResult {
  writers: number
  rounds: number
  /** Writebacks that exited 0, and of those, how many entries were missing from their page. */
  exitedZero: number
  lost: number
  /** Problems, one line each (empty when every entry is present). */
  problems: string[]
  /** Files other than the pages left in the vault (temp or lock files). */
  leftovers: string[]
  ms: number
}

type Msg = { type: 'ready' } | { type: 'paused' } | { type: 'done'; code: number; out: string; err: string }

export interface Worker {
  child: ChildProcess
  next(type: Msg['type']): Promise<Msg>
}

const cacheDir = (raceDir: string) => process.env.NODE_COMPILE_CACHE || join(raceDir, 'compile-cache')

/** Forks a writeback worker and waits for its "ready"; `compileCache`: the NODE_COMPILE_CACHE folder it uses. */
export async function startWorker(compileCache?: string): Promise<Worker> {
  const env = compileCache === undefined ? process.env : { ...process.env, NODE_COMPILE_CACHE: compileCache }
  // execArgv []: not the vitest worker's own flags (its --require and loader hooks, for nothing a writeback reads).
  const child = fork(WORKER, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], env, execArgv: [] })
  const queue: Msg[] = []
  const waiting: Array<(m: Msg) => void> = []
  child.on('message', (m: Msg) => {
    const w = waiting.shift()
    if (w) w(m)
    else queue.push(m)
  })
  const worker: Worker = {
    child,
    next: async (type) => {
      const m = queue.shift() ?? (await new Promise<Msg>((r) => waiting.push(r)))
      if (m.type !== type) throw new Error(`worker sent ${m.type}, expected ${type}`)
      return m
    },
  }
  await worker.next('ready')
  return worker
}

/** Writes one report per writer (distinct finish times, so distinct entries) and returns their paths and markers. */
async function reports(dir: string, writers: number): Promise<{ paths: string[]; markers: string[] }> {
  const base = Date.now() - 60_000
  const paths: string[] = []
  const markers: string[] = []
  for (let i = 0; i < writers; i++) {
    const finishedAt = new Date(base + i * 1000).toISOString()
    const path = join(dir, `report-${i}.json`)
    await writeFile(path, JSON.stringify(greenReport(finishedAt)))
    paths.push(path)
    markers.push(entryMarker({ svc: 'llm-7', knob: 'PREFILL_INTERLEAVE', finishedAt }))
  }
  return { paths, markers }
}

async function checkRound(
  vault: string,
  page: string,
  markers: string[],
  codes: number[],
  round: number,
  result: RaceResult,
): Promise<void> {
  const text = await readFile(page, 'utf8')
  codes.forEach((code, i) => {
    if (code !== 0) {
      result.problems.push(`round ${round}: writer ${i} exited ${code}`)
      return
    }
    result.exitedZero++
    if (!text.includes(markers[i]!)) {
      result.lost++
      result.problems.push(`round ${round}: writer ${i} exited 0 but its entry is not on the page`)
    }
  })
  for (const f of await readdir(vault)) if (!f.endsWith('.md')) result.leftovers.push(`round ${round}: ${f}`)
}

export async function race(writers: number, rounds: number): Promise<RaceResult> {
  const started = performance.now()
  const dir = await mkdtemp(join(tmpdir(), 'armproof-race-'))
  const result: RaceResult = { writers, rounds, exitedZero: 0, lost: 0, problems: [], leftovers: [], ms: 0 }
  const cache = cacheDir(dir)
  // The first worker fills the compile cache (it flushes it before "ready"); the others start after it.
  const workers = [await startWorker(cache)]
  try {
    workers.push(...(await Promise.all(Array.from({ length: writers - 1 }, () => startWorker(cache)))))
    const { paths, markers } = await reports(dir, writers)
    for (let round = 0; round < rounds; round++) {
      const vault = join(dir, `vault-${round}`)
      await mkdir(vault)
      const page = join(vault, 'llm-7.md')
      await writeFile(page, PAGE)
      const done = workers.map((w) => w.next('done'))
      workers.forEach((w, i) => w.child.send({ type: 'go', args: ['--report', paths[i]!, '--vault', vault], cwd: dir }))
      const codes = (await Promise.all(done)).map((m) => (m as { code: number }).code)
      await checkRound(vault, page, markers, codes, round, result)
    }
  } finally {
    for (const w of workers) w.child.send({ type: 'exit' })
    await Promise.all(workers.map((w) => (w.child.exitCode === null ? once(w.child, 'exit') : undefined)))
    await rm(dir, { recursive: true, force: true })
  }
  result.ms = Math.round(performance.now() - started)
  return result
}

/**
 * One round of `writers` real `pnpm writeback` processes (node bin/writeback.ts) on one page. The
 * page's lock is held first, as a live writeback holds it (this process's pid), until every one of
 * them has found it held: each first tries to create the lock by linking a lock-temp file named by
 * its pid, which it removes once the link failed. Then the lock is released, so every process has
 * waited in the command itself and races the others for the page.
 */
export async function cliRace(writers: number): Promise<RaceResult> {
  const started = performance.now()
  const dir = await mkdtemp(join(tmpdir(), 'armproof-race-cli-'))
  const result: RaceResult = { writers, rounds: 1, exitedZero: 0, lost: 0, problems: [], leftovers: [], ms: 0 }
  try {
    const { paths, markers } = await reports(dir, writers)
    const vault = join(dir, 'vault')
    await mkdir(vault)
    const page = join(vault, 'llm-7.md')
    await writeFile(page, PAGE)
    const lock = lockPathOf(page)
    await writeFile(lock, `${process.pid} ${hostname().replace(/\s/g, '_') || 'localhost'} ${new Date().toISOString()}\n`)
    const tried = new Set<number>()
    const allTried = Promise.withResolvers<void>()
    const watcher = watch(vault, (_event, name) => {
      const m = /^\.llm-7\.md\.armproof-lock-(\d+)-[0-9a-f]+\.tmp$/.exec(String(name))
      if (m && !existsSync(join(vault, m[0]))) tried.add(Number(m[1]))
      if (runs.every((r) => r.pid !== undefined && tried.has(r.pid))) allTried.resolve()
    })
    const runs = paths.map((p) =>
      execa(process.execPath, [BIN, '--report', p, '--vault', vault], { cwd: dir, reject: false, stdin: 'ignore' }),
    )
    try {
      // Released when all have found it held; sooner only when one exits first or it takes too long (both reported).
      const timeout = new Promise<void>((resolve) => setTimeout(resolve, 25_000).unref())
      await Promise.race([allTried.promise, ...runs, timeout])
    } finally {
      watcher.close()
      const waited = runs.filter((r) => r.pid !== undefined && tried.has(r.pid)).length
      if (waited < writers) result.problems.push(`only ${waited} of ${writers} writebacks found the page lock held before it was released`)
      await rm(lock)
    }
    const done = await Promise.all(runs)
    await checkRound(
      vault,
      page,
      markers,
      done.map((r) => r.exitCode ?? -1),
      0,
      result,
    )
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
  result.ms = Math.round(performance.now() - started)
  return result
}
