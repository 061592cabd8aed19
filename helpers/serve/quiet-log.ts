// The log lines of requests no token vouches for: the first of each interval is written, the rest
// counted and said in one line when the interval ends (how many, from how many addresses), so a
// client without the token cannot fill the log (one line per request was 62,000 lines in 45 s).

/** Addresses counted per interval at most (the count of requests goes on past it). */
const MAX_ADDRESSES = 10_000

export class QuietLog {
  private counted = 0
  private readonly from = new Set<string>()
  private timer: NodeJS.Timeout | undefined
  private readonly log: (line: string) => void
  private readonly intervalMs: number

  constructor(log: (line: string) => void, intervalMs = 10_000) {
    this.log = log
    this.intervalMs = intervalMs
  }

  /** A line of an unauthenticated request: written when it is the interval's first, else counted. */
  line(text: string, address: string): void {
    if (this.timer === undefined) {
      this.log(`${text} (unauthenticated; more in the next ${this.intervalMs / 1000}s are counted, not written one by one)`)
      this.timer = setTimeout(() => this.flush(), this.intervalMs)
      this.timer.unref()
      return
    }
    this.counted++
    if (this.from.size < MAX_ADDRESSES) this.from.add(address)
  }

  /** Says what was counted and starts a fresh interval. */
  flush(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    if (this.counted > 0)
      this.log(
        `armproof serve: ${this.counted} more unauthenticated request(s) in the last ${this.intervalMs / 1000}s from ${this.from.size}${this.from.size >= MAX_ADDRESSES ? '+' : ''} address(es) (not written one by one)`,
      )
    this.counted = 0
    this.from.clear()
  }
}
