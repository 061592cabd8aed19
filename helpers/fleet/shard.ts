// `--shard i/n`: the i-th of n stable slices of a fleet's targets. Targets are ordered by a hash
// of their identity (service, knob, endpoint), never by their place in the file, and cut into n
// contiguous slices whose sizes differ by at most one: every target is in exactly one shard,
// reordering the file moves nothing, and adding or removing a target moves at most one target
// across each slice boundary.
import { createHash } from 'node:crypto'

export interface Shard {
  /** 1-based. */
  index: number
  count: number
}

/** Parses `i/n` (1 ≤ i ≤ n ≤ 1000); a message when it is not one. */
export function parseShard(text: string): Shard | string {
  const m = /^(\d{1,4})\/(\d{1,4})$/.exec(text.trim())
  if (!m) return `${JSON.stringify(text.slice(0, 40))} is not i/n, e.g. 2/4 (the second of four slices)`
  const index = Number(m[1])
  const count = Number(m[2])
  if (count < 1 || count > 1000) return `n must be 1–1000, got ${count}`
  if (index < 1 || index > count) return `i must be 1–${count}, got ${index}`
  return { index, count }
}

/** The order of the fleet that shards cut: by sha256 of each identity, the identity itself breaking ties. */
export function shardOrder(identities: readonly string[]): number[] {
  const keyed = identities.map((id, i) => ({ i, id, h: createHash('sha256').update(id).digest('hex') }))
  keyed.sort((a, b) => (a.h < b.h ? -1 : a.h > b.h ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : a.i - b.i))
  return keyed.map((k) => k.i)
}

/** Positions (in the file's order, ascending) of the targets in shard `shard`. */
export function shardOf(identities: readonly string[], shard: Shard): number[] {
  const order = shardOrder(identities)
  const n = order.length
  const from = Math.floor(((shard.index - 1) * n) / shard.count)
  const to = Math.floor((shard.index * n) / shard.count)
  return order.slice(from, to).sort((a, b) => a - b)
}
