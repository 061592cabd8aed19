// Fault-matrix rows (./fault-matrix-check.ts) that need the very same engine and never change it
// share one, started once for them: rows judged in this process whose engine is only a profile,
// its args and env (no fault, no load phases, no second copy), with nothing beside or in front of
// it, no env of their own and no /stats read. They run one after another on it: each verdict is
// still about that one engine, and no other row's traffic is in flight while a row reads its
// meter or its ledger. The engine stops after the last of them.
import { slots } from '../../helpers/seams/slots.ts'
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

/** One engine for several rows, one row at a time (a slot of helpers/seams/slots.ts). */
export class SharedEngine {
  private readonly turn = slots(1)
  private engine: Promise<RowEngines> | undefined
  private left: number
  private readonly start: () => Promise<RowEngines>

  constructor(rows: number, start: () => Promise<RowEngines>) {
    this.start = start
    this.left = rows
  }

  /** Runs `check` on the engine once the rows before it are done; the last row's turn stops it. */
  run<T>(check: (row: RowEngines) => Promise<T>): Promise<T> {
    return this.turn.run(async () => {
      try {
        this.engine ??= this.start()
        return await check(await this.engine)
      } finally {
        if (--this.left === 0) await (await this.engine?.catch(() => undefined))?.stop()
      }
    })
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
    const share = new SharedEngine(members.length, () => start(members[0]!))
    for (const c of members) shares.set(c, share)
  }
  return shares
}
