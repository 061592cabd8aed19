// The wait for Prometheus, shown: on a terminal a live line (cleared when done); elsewhere (CI logs)
// a plain line when the queries start and at least every 15 s until they are answered, so a slow
// Prometheus never looks like a hung job. Real time, never the seam's clock: a replay reads that
// clock exactly as the recording did.
import type { OutStream } from '../cli/streams.ts'
import type { ReadProgress } from './read.ts'

/** A plain line at least this often while queries are outstanding (the house rule is 15 s). */
export const LOG_EVERY_MS = 10_000

export interface Progress {
  update(p: ReadProgress): void
  done(): void
}

export function progress(err: OutStream, live: boolean, what: string): Progress {
  const started = Date.now()
  let last: ReadProgress = { done: 0, total: 0, what: '' }
  const seconds = () => `${Math.round((Date.now() - started) / 1000)}s`
  let timer: NodeJS.Timeout | undefined
  if (!live) {
    err.write(`armproof effect: ${what}\n`)
    timer = setInterval(
      () =>
        err.write(
          `armproof effect: ${last.done} of ${last.total} range queries answered after ${seconds()}${last.what ? ` (last: ${last.what})` : ''}\n`,
        ),
      LOG_EVERY_MS,
    )
    timer.unref()
  }
  return {
    update(p) {
      last = p
      if (live) err.write(`\r\x1b[2Karmproof effect: ${p.done}/${p.total} range queries · ${p.what} · ${seconds()}`)
    },
    done() {
      if (timer) clearInterval(timer)
      if (live) err.write('\r\x1b[2K')
    },
  }
}
