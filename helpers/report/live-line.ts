// The one progress line a terminal shows during a long wait, redrawn in place on stderr. It ticks
// by time, not by poll: a step reports `waiting for …/health: connection refused · 1.0s of 20s`
// once per poll (every few seconds), and every second in between the line is drawn again with its
// elapsed part moved on by the time since (never past its budget) and the spinner turned, so a
// wait never looks frozen. Logs never get it (they get plain lines: ./reporter.ts).
import { formatDuration, parseShownDuration } from '../config/duration.ts'

const CLEAR_LINE = '\r\x1b[K'
const SPINNER = '⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏'
export const TICK_MS = 1000

/** `<elapsed> of [up to ]<budget>`, the last such pair of a progress message, in formatDuration's words. */
const ELAPSED_OF_BUDGET = /(\d+ms|\d+(?:\.\d)?s|\d+m \d{2}s) of (up to )?(\d+ms|\d+(?:\.\d)?s|\d+m \d{2}s)(?!.* of (?:up to )?\d)/

/** The message with its elapsed part moved on by `byMs`, at most to its budget; unchanged without one. */
export function advanced(message: string, byMs: number): string {
  if (byMs <= 0) return message
  return message.replace(ELAPSED_OF_BUDGET, (whole, elapsed: string, upTo: string | undefined, budget: string) => {
    const from = parseShownDuration(elapsed)
    const cap = parseShownDuration(budget)
    if (from === undefined || cap === undefined) return whole
    return `${formatDuration(Math.min(from + byMs, cap))} of ${upTo ?? ''}${budget}`
  })
}

export interface LiveLineOptions {
  write(text: string): unknown
  /** Columns the line is cut to. */
  width: number
  now?: () => number
}

export class LiveLine {
  readonly #o: LiveLineOptions
  #message: string | undefined
  #since = 0
  #frame = 0
  #drawn = false
  #timer: ReturnType<typeof setInterval> | undefined

  constructor(options: LiveLineOptions) {
    this.#o = options
  }

  #now(): number {
    return this.#o.now?.() ?? Date.now()
  }

  /** A new progress message: drawn now, then again every second until the next one or clear(). */
  show(message: string): void {
    this.#message = message.replace(/\s+/g, ' ')
    this.#since = this.#now()
    this.#draw()
    if (!this.#timer) {
      this.#timer = setInterval(() => this.#draw(), TICK_MS)
      this.#timer.unref()
    }
  }

  #draw(): void {
    if (this.#message === undefined) return
    const text = `  ${SPINNER[this.#frame++ % SPINNER.length]} ${advanced(this.#message, this.#now() - this.#since)}`
    const chars = [...text]
    const room = this.#o.width - 1
    this.#o.write(`${CLEAR_LINE}${chars.length > room ? `${chars.slice(0, room - 1).join('')}…` : text}`)
    this.#drawn = true
  }

  /** Erases the line (a step line is about to be printed, or the run ended) and stops ticking. */
  clear(): void {
    if (this.#timer) clearInterval(this.#timer)
    this.#timer = undefined
    this.#message = undefined
    if (this.#drawn) this.#o.write(CLEAR_LINE)
    this.#drawn = false
  }
}
