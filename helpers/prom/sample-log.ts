// A text-format family's samples, kept as numbers while the page is read and made Sample objects
// the first time the family's `samples` is read (parse.ts puts that accessor on the family). A
// page of 300,000 samples then costs its scan and little more, and a caller pays for the objects
// of the families it reads. The objects are the ones an eager read would have built: the same
// fields in the same order, the same label objects (label-sets.ts, wide-labels.ts).
import { NO_LABELS } from './chars.ts'
import type { LabelSets } from './label-sets.ts'
import type { Sample } from './types.ts'
import { lazyLabels } from './wide-labels.ts'

/** How a line's label set was read: a positive count means that many pairs (label-sets.ts). */
export const LABELS_NONE = 0
/** Read by the full reader into `labelObject`. */
export const LABELS_OBJECT = -1
/** A wide set opening at `wideOpen` (wide-labels.ts). */
export const LABELS_WIDE = -2

/** What the cursor leaves of the sample line it read last. */
export interface LineRecord {
  readonly value: number
  readonly rawFrom: number
  readonly rawTo: number
  /** NaN when the line has no timestamp. */
  readonly stamp: number
  readonly labelKind: number
  readonly labelObject: Readonly<Record<string, string>>
  readonly wideOpen: number
}

/** Integers per sample: name index, line, raw from, raw to, label kind, where its labels are. */
const INTS = 6
/** Samples (and pair numbers) per chunk, at most; chunks double up to it, so nothing is copied as a family grows. */
const MAX_CHUNK = 1 << 12
const MAX_PAIR_CHUNK = 1 << 16

export class SampleLog {
  private readonly s: string
  private readonly sets: LabelSets
  private readonly names: string[] = []
  private lastName = ''
  private lastIndex = -1
  private count = 0
  private readonly ints: Int32Array[] = []
  private readonly values: Float64Array[] = []
  private int: Int32Array = new Int32Array(0)
  private value: Float64Array = new Float64Array(0)
  /** Samples in the last chunk. */
  private used = 0
  /** Timestamps by sample number: few lines carry one. */
  private readonly stamps = new Map<number, number>()
  /** Pair numbers of the sets read by label-sets.ts, one run per sample: `where` is chunk << 16 | offset. */
  private readonly pairChunks: Int32Array[] = []
  private pairs: Int32Array = new Int32Array(0)
  private pairsUsed = 0
  private readonly objects: Array<Readonly<Record<string, string>>> = []

  constructor(s: string, sets: LabelSets) {
    this.s = s
    this.sets = sets
  }

  /** Records the sample line just read; `linePairs[0..count)` are its pairs when it has some. */
  add(name: string, line: number, r: LineRecord, linePairs: readonly number[]): void {
    if (name !== this.lastName) {
      this.lastName = name
      this.lastIndex = this.names.indexOf(name)
      if (this.lastIndex < 0) this.lastIndex = this.names.push(name) - 1
    }
    const kind = r.labelKind
    let where = 0
    if (kind > 0) {
      if (this.pairsUsed + kind > this.pairs.length) {
        this.pairChunks.push((this.pairs = new Int32Array(Math.min(Math.max(this.pairs.length * 2, 64), MAX_PAIR_CHUNK))))
        this.pairsUsed = 0
      }
      where = ((this.pairChunks.length - 1) << 16) | this.pairsUsed
      for (let j = 0; j < kind; j++) this.pairs[this.pairsUsed++] = linePairs[j]!
    } else if (kind === LABELS_OBJECT) where = this.objects.push(r.labelObject) - 1
    else if (kind === LABELS_WIDE) where = r.wideOpen
    if (this.used === this.value.length) {
      const size = Math.min(this.value.length * 2 || 8, MAX_CHUNK)
      this.values.push((this.value = new Float64Array(size)))
      this.ints.push((this.int = new Int32Array(size * INTS)))
      this.used = 0
    }
    if (!Number.isNaN(r.stamp)) this.stamps.set(this.count, r.stamp)
    this.count++
    const u = this.used++
    this.value[u] = r.value
    const int = this.int
    const i = u * INTS
    int[i] = this.lastIndex
    int[i + 1] = line
    int[i + 2] = r.rawFrom
    int[i + 3] = r.rawTo
    int[i + 4] = kind
    int[i + 5] = where
  }

  /** The Sample objects, in page order. */
  build(): Sample[] {
    const { s, names } = this
    const out: Sample[] = []
    for (let c = 0; c < this.ints.length; c++) {
      const int = this.ints[c]!
      const value = this.values[c]!
      const n = c === this.ints.length - 1 ? this.used : value.length
      for (let u = 0; u < n; u++) {
        const i = u * INTS
        const kind = int[i + 4]!
        const where = int[i + 5]!
        const labels =
          kind > 0
            ? this.sets.labelsOf(this.pairChunks[where >>> 16]!, where & 0xffff, kind)
            : kind === LABELS_OBJECT
              ? this.objects[where]!
              : NO_LABELS
        const sample: Sample = { name: names[int[i]!]!, labels, value: value[u]!, raw: s.slice(int[i + 2], int[i + 3]), line: int[i + 1]! }
        if (kind === LABELS_WIDE) lazyLabels(sample, s, where)
        const stamp = this.stamps.get(out.length)
        if (stamp !== undefined) sample.timestampMs = stamp
        out.push(sample)
      }
    }
    return out
  }
}
