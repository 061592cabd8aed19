// Fault-matrix rows (./fault-matrix-check.ts) that need the very same engine and never change it
// share one, started once for them: rows judged in this process whose engine is only a profile,
// its args and env (no fault, no load phases, no second copy), with nothing beside or in front of
// it, no env of their own and no /stats read. They run one after another on it: each verdict is
// still about that one engine, and no other row's traffic is in flight while a row reads its
// meter or its ledger. The engine stops after the last of them.
import type { RowEngines } from './row-engines.ts'
import type { Row } from './fault-matrix-check.ts'

const SHAREABLE_ENGINE = new Set(['profile', 'args', 'engineEnv'])

/** Whether `c` may run on an engine another row has used, and will use after it. */
export function shareable(c: Row): boolean {
  return (
    c.how === 'in-process' &&
    Object.keys(c.engine).every((k) => SHAREABLE_ENGINE.has(k)) &&
    c.env === undefined &&
    c.baseUrl === undefined &&
    c.stats === undefined &&
    c.beside === undefined &&
    c.reach === undefined &&
    c.mistake === undefined
  )
}

/** One engine for several rows, one row at a time. */
export class SharedEngine {
  private turns: Promise<unknown> = Promise.resolve()
  private engine: Promise<RowEngines> | undefined
  private left: number
  readonly rows: readonly Row[]
  private readonly start: () => Promise<RowEngines>

  constructor(rows: readonly Row[], start: () => Promise<RowEngines>) {
    this.rows = rows
    this.start = start
    this.left = rows.length
  }

  /** Runs `check` on the engine once the rows before it are done; the last row's turn stops it. */
  run<T>(check: (row: RowEngines) => Promise<T>): Promise<T> {
    const turn = this.turns.then(async () => {
      try {
        this.engine ??= this.start()
        return await check(await this.engine)
      } finally {
        if (--this.left === 0) await (await this.engine?.catch(() => undefined))?.stop()
      }
    })
    this.turns = turn.catch(() => undefined)
    return turn
  }
}

/** The rows that share an engine (two or more with the same engine options), each to its group's. */
export function sharedEngines(rows: readonly Row[], start: (first: Row) => Promise<RowEngines>): Map<Row, SharedEngine> {
  const groups = new Map<string, Row[]>()
  for (const c of rows.filter(shareable)) {
    const key = JSON.stringify(c.engine)
    groups.set(key, [...(groups.get(key) ?? []), c])
  }
  const shares = new Map<Row, SharedEngine>()
  for (const members of groups.values()) {
    if (members.length < 2) continue
    const share = new SharedEngine(members, () => start(members[0]!))
    for (const c of members) shares.set(c, share)
  }
  return shares
}
