// The one-flag law's baseline: the last green record of the service, read before anything is
// contacted, so a replay takes it from its recording (it is part of the run's target) and a
// problem the operator can fix is exit 2 with the others. `--baseline-report FILE`: the green
// verify report of the service's last arm (its step one-flag's record); else `--vault DIR`: the
// newest armproof entry on the service's vault page (found as writeback finds it), its record
// the entry's `engine:` line, checked against the digest in its marker. A source that holds no
// record (a first arm, an entry written before the law) is a baseline without one: the step is
// then skipped, saying why.
import { readFileSync, statSync } from 'node:fs'
import { relative, resolve } from 'node:path'
import { asArmRecord, parseRecordText, recordDigest, type ArmRecord } from './arm-record.ts'
import { showValue } from './shell.ts'
import type { OptionReader } from './sources.ts'
import { ENGINE_LINE, markerPart, pageEntries, servicePages, type PageEntry } from './vault-page.ts'

export interface Baseline {
  /** Where it was read, as the operator named it: `--baseline-report reports/llm-7.json`, `--vault vault (llm-7.md, line 12)`. */
  from: string
  /** When that run finished (the report's finishedAt, the entry's marker); null: nothing was found. */
  finishedAt: string | null
  /** The record; null: the source holds none (`why` says). */
  record: ArmRecord | null
  /** Why there is no record, or why the one there cannot be trusted (`untrusted`). */
  why?: string
  /** The record beside the entry does not match its marker's digest: it was edited. */
  untrusted?: boolean
}

/** No report comes near this. */
const MAX_BYTES = 32 * 1024 * 1024

function readReportBaseline(read: OptionReader, path: string, shown: string, svc: string): Baseline | undefined {
  const from = `--baseline-report ${shown}`
  const raw = read.raw('baseline-report')!
  let data: unknown
  try {
    const st = statSync(path)
    if (!st.isFile()) return (read.problem(raw, `${showValue(shown)} is not a regular file`), undefined)
    if (st.size > MAX_BYTES) return (read.problem(raw, `${showValue(shown)} is larger than 32 MiB; no report is that large`), undefined)
    data = JSON.parse(readFileSync(path, 'utf8'))
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    read.problem(
      raw,
      code === 'ENOENT'
        ? `${showValue(shown)}: no such file; pass the JSON report verify wrote (--report) for the service's last green arm`
        : code
          ? `${showValue(shown)} cannot be read (${code})`
          : `${showValue(shown)} is not JSON: pass the JSON report verify wrote (--report), not its JUnit file`,
    )
    return undefined
  }
  const r = (data ?? {}) as Record<string, unknown>
  if (typeof r.svc !== 'string' || !Array.isArray(r.steps) || (r.tool as { name?: unknown } | undefined)?.name !== 'armproof') {
    read.problem(raw, `${showValue(shown)} is not the report of one target that verify writes (svc, steps, tool)`)
    return undefined
  }
  if (r.svc !== svc) {
    read.problem(
      raw,
      `${showValue(shown)} is the report of service ${showValue(r.svc)}, not ${showValue(svc)}: pass ${svc}'s own last green report`,
    )
    return undefined
  }
  if (r.verdict !== 'green' || r.exitCode !== 0) {
    read.problem(
      raw,
      `${showValue(shown)} is not green (verdict ${showValue(String(r.verdict))}, exit ${String(r.exitCode)}): the baseline is the last green record of ${svc}; pass that report`,
    )
    return undefined
  }
  const finishedAt = typeof r.finishedAt === 'string' ? r.finishedAt : null
  const step = (r.steps as Array<{ id?: unknown; evidence?: { record?: unknown } }>).find((s) => s?.id === 'one-flag')
  const record = asArmRecord(step?.evidence?.record)
  if (record) return { from, finishedAt, record }
  return {
    from,
    finishedAt,
    record: null,
    why: step
      ? 'its step one-flag recorded no engine record'
      : 'it was written by an armproof before the one-flag law: it holds no record of the engine',
  }
}

function readVaultBaseline(read: OptionReader, vault: string, shown: string, svc: string, baseUrl: string | null): Baseline | undefined {
  const raw = read.raw('vault')!
  try {
    if (!statSync(vault).isDirectory()) return (read.problem(raw, `${showValue(shown)} is not a folder`), undefined)
  } catch {
    read.problem(raw, `${showValue(shown)}: no such folder (the vault, whose pages writeback writes)`)
    return undefined
  }
  const { claimed, named, files } = servicePages(vault, svc)
  const owners = claimed.length ? claimed : named
  if (owners.length > 1) {
    read.problem(
      raw,
      `${showValue(shown)}: ${owners.length} pages are ${svc}'s (${owners.map((f) => relative(vault, f)).join(', ')}): keep service: ${svc} on one page only`,
    )
    return undefined
  }
  if (owners.length === 0)
    return {
      from: `--vault ${shown}`,
      finishedAt: null,
      record: null,
      why: `no page of ${svc} in it (front matter service: ${svc}, or ${svc}.md; ${files} Markdown file${files === 1 ? '' : 's'} looked at)`,
    }
  const page = owners[0]!
  const text = readFileSync(page, 'utf8')
  const endpoint = baseUrl === null ? null : markerPart(baseUrl)
  const entries = pageEntries(text).filter(
    (e) =>
      e.marker.svc === markerPart(svc) &&
      !Number.isNaN(Date.parse(e.marker.finishedAt)) &&
      (e.marker.endpoint === null || endpoint === null || e.marker.endpoint === endpoint),
  )
  const newest = entries.reduce<(typeof entries)[number] | undefined>(
    (best, e) => (best === undefined || Date.parse(e.marker.finishedAt) > Date.parse(best.marker.finishedAt) ? e : best),
    undefined,
  )
  const pageShown = relative(vault, page)
  if (!newest)
    return {
      from: `--vault ${shown} (${pageShown})`,
      finishedAt: null,
      record: null,
      why: `${pageShown} holds no armproof entry of ${svc}${endpoint ? ' for this endpoint' : ''}: this is its first recorded arm`,
    }
  const from = `--vault ${shown} (${pageShown}, the entry of line ${newest.line})`
  const got = entryRecord(newest)
  return 'record' in got
    ? { from, finishedAt: newest.marker.finishedAt, record: got.record }
    : { from, finishedAt: newest.marker.finishedAt, record: null, why: got.why, ...(got.untrusted ? { untrusted: true as const } : {}) }
}

/** The one-flag record beside a vault entry (its `engine:` line, checked against its marker's digest), or why there is none. */
export function entryRecord(entry: PageEntry): { record: ArmRecord } | { why: string; untrusted?: true } {
  const line = entry.under.find((l) => l.startsWith(ENGINE_LINE))
  if (entry.marker.record === null || line === undefined)
    return {
      why:
        entry.marker.record === null
          ? 'its newest entry was written before the one-flag law: it holds no record of the engine'
          : `its newest entry's marker names a record, but no "${ENGINE_LINE.trim()}" line is under it`,
    }
  const parsed = parseRecordText(line.slice(ENGINE_LINE.length))
  if ('problem' in parsed) return { untrusted: true, why: `its "engine:" line ${parsed.problem}` }
  if (recordDigest(parsed) !== entry.marker.record)
    return {
      untrusted: true,
      why: `its "engine:" line does not match the digest in the entry's marker (${entry.marker.record}): it was edited after armproof wrote it`,
    }
  return { record: parsed }
}

/**
 * The baseline the options name (`--baseline-report` first, else `--vault`), or null when they
 * name none; undefined when a problem was said (exit 2). Paths are the operator's, against `cwd`.
 */
export function readBaseline(read: OptionReader, svc: string, baseUrl: string | null, cwd: string): Baseline | null | undefined {
  const report = read.raw('baseline-report')?.value || null
  const vault = read.raw('vault')?.value || null
  if (svc === '') return null
  if (report !== null) return readReportBaseline(read, resolve(cwd, report), report, svc)
  if (vault !== null) return readVaultBaseline(read, resolve(cwd, vault), vault, svc, baseUrl)
  return null
}
