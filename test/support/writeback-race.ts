// Many writeback processes on one page at once. `race` forks `writers` worker processes once and
// runs `rounds` rounds: each round gets a fresh page, every worker writes its own green report to
// it at the same moment, and the page must then hold every entry of every writer that exited 0.
// `cliRace` does one round with `node bin/writeback.ts` itself, one process per writer.
import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'
import { entryMarker } from '../../helpers/writeback/entry.ts'
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

export async function startWorker(): Promise<Worker> {
  const child = fork(WORKER, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
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

async function checkRound(vault: string, page: string, markers: string[], codes: number[], round: number, result: RaceResult): Promise<void> {
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
  const workers = await Promise.all(Array.from({ length: writers }, () => startWorker()))
  try {
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

/** One round of `writers` real `pnpm writeback` processes (node bin/writeback.ts) started together. */
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
    const runs = await Promise.all(paths.map((p) => execa(process.execPath, [BIN, '--report', p, '--vault', vault], { cwd: dir, reject: false, stdin: 'ignore' })))
    await checkRound(vault, page, markers, runs.map((r) => r.exitCode ?? -1), 0, result)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
  result.ms = Math.round(performance.now() - started)
  return result
}
