// Several host reads in one shell call (one process, one ssh session): each part runs in its own
// subshell, its script handed over quoted (`eval` of a single-quoted word: its text is never read
// as the batch's own), and marker lines around it on stdout and on stderr say where its output
// starts and ends and with which status. The markers carry a nonce drawn per batch, so nothing a
// part prints can end another part early or forge a status. ./exec.ts watches the markers for
// each part's own timeout and output cap; `splitBatch` cuts the output back into the parts.
import { randomBytes } from 'node:crypto'
import { quote } from '../config/shell.ts'
import { batchTag, type Exec } from './exec.ts'
import { cancelledResult, classifyFailure, type HostResult } from './host-result.ts'

export const newNonce = (): string => randomBytes(12).toString('hex')

/** The batch's script: the parts in order, each framed on both streams. */
export function batchScript(parts: readonly string[], nonce: string): string {
  const tag = batchTag(nonce)
  const lines: string[] = []
  parts.forEach((part, i) => {
    lines.push(`printf '%s\\n' ${quote(`${tag}begin ${i}`)}; printf '%s\\n' ${quote(`${tag}begin ${i}`)} >&2`)
    lines.push(`( eval ${quote(part)} )`)
    lines.push(`s=$?; printf '\\n%s %s\\n' ${quote(`${tag}end ${i}`)} "$s"; printf '\\n%s %s\\n' ${quote(`${tag}end ${i}`)} "$s" >&2`)
  })
  lines.push('exit 0')
  return lines.join('\n')
}

export interface PartOutput {
  stdout: string
  stderr: string
  /** The part's status; null when its end marker never came (it was stopped, or the call died). */
  exitCode: number | null
  /** Its begin marker came: the part started. */
  began: boolean
}

/** One stream cut into the parts' sections; what lies outside every section (ssh's own words) in `outside`. */
function splitStream(
  text: string,
  tag: string,
  n: number,
): { parts: Array<{ text: string; began: boolean; status: number | null }>; outside: string } {
  const parts = Array.from({ length: n }, () => ({ text: '', began: false, status: null as number | null }))
  let outside = ''
  let at = 0
  for (let i = 0; i < n; i++) {
    const begin = `${tag}begin ${i}\n`
    const start = text.startsWith(begin, at) ? at : text.indexOf(`\n${begin}`, at) >= 0 ? text.indexOf(`\n${begin}`, at) + 1 : -1
    if (start < 0) break
    outside += text.slice(at, start)
    const body = start + begin.length
    parts[i]!.began = true
    // The end marker: a newline of our own, the tag, `end i`, the status, a newline.
    const endRe = new RegExp(`\\n${tag.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}end ${i} (\\d{1,3})\\n`, 'g')
    endRe.lastIndex = body
    const m = endRe.exec(text)
    if (!m) {
      parts[i]!.text = text.slice(body)
      at = text.length
      break
    }
    parts[i]!.text = text.slice(body, m.index)
    parts[i]!.status = Number(m[1])
    at = m.index + m[0].length
  }
  outside += text.slice(at)
  return { parts, outside }
}

/**
 * The batch's output cut back into its `n` parts: each part's stdout, stderr and status; what
 * no part printed (ssh's or the login shell's own words) is `outside`, on stderr.
 */
export function splitBatch(stdout: string, stderr: string, nonce: string, n: number): { parts: PartOutput[]; outside: string } {
  const tag = batchTag(nonce)
  const o = splitStream(stdout, tag, n)
  const e = splitStream(stderr, tag, n)
  const parts = o.parts.map((p, i) => ({ stdout: p.text, stderr: e.parts[i]!.text, exitCode: p.status, began: p.began }))
  return { parts, outside: `${o.outside.trim() ? `${o.outside}` : ''}${e.outside}` }
}

/** What a batch needs of its host client: to start the batch's script, and how to read a failure. */
export interface BatchLauncher {
  /** Starts the batch (locally, or in one ssh session), each part with its own timeout; `signal` ends it. */
  launch(script: string, nonce: string, timeoutsMs: readonly number[], signal?: AbortSignal): Promise<Exec>
  /** The program started ("ssh", "sh"), for a spawn failure's message. */
  file: string
  viaSsh: boolean
  target: string
}

/**
 * Runs `scripts` (each already wrapped for sudo or the deploy user) in as few calls as it can:
 * one, unless a part runs out of time or output, which ends that call there (that part gets
 * `timeout` or `output-cut`, as it would alone) and the parts after it run in the next. A call
 * that fails as a whole (ssh refused, unreachable) gives every part not yet ended its failure.
 * `signal` aborting ends the call: the parts not yet ended are `cancelled`, and none runs after.
 */
export async function runParts(
  scripts: readonly string[],
  timeoutsMs: readonly number[],
  launcher: BatchLauncher,
  signal?: AbortSignal,
): Promise<HostResult[]> {
  const results: HostResult[] = []
  while (results.length < scripts.length) {
    const from = results.length
    const nonce = newNonce()
    const started = performance.now()
    const r = await launcher.launch(batchScript(scripts.slice(from), nonce), nonce, timeoutsMs.slice(from), signal)
    const elapsed = Math.round(performance.now() - started)
    const split = splitBatch(r.stdout, r.stderr, nonce, scripts.length - from)
    const stopped = r.part?.stopped ?? null
    const base = (k: number) => ({ command: scripts[from + k]!, target: launcher.target })
    for (const [k, p] of split.parts.entries()) {
      if (r.spawnError !== undefined) {
        results.push({
          ...base(k),
          stdout: '',
          stderr: `${launcher.file}: ${r.spawnError}`,
          exitCode: null,
          failure: 'spawn',
          durationMs: elapsed,
        })
      } else if (p.exitCode !== null) {
        const failure = classifyFailure(p.stderr, p.exitCode, false)
        results.push({
          ...base(k),
          stdout: p.stdout,
          stderr: p.stderr,
          exitCode: p.exitCode,
          durationMs: r.part?.ms[k] ?? elapsed,
          ...(failure ? { failure } : {}),
        })
      } else if (r.cancelled) {
        results.push(cancelledResult(scripts[from + k]!, launcher.target))
      } else if (k === stopped) {
        results.push({
          ...base(k),
          stdout: p.stdout,
          stderr: p.stderr,
          exitCode: null,
          failure: r.cut ? 'output-cut' : 'timeout',
          durationMs: elapsed,
        })
        break
      } else {
        // The call ended before this part did, and not by our hand: ssh lost or never made its
        // connection (its own words are outside every part), or the batch's shell was killed.
        const said = `${p.stderr}${split.outside}`
        const failure = classifyFailure(split.outside, r.exitCode, launcher.viaSsh) ?? (launcher.viaSsh ? 'unreachable' : 'spawn')
        results.push({ ...base(k), stdout: p.stdout, stderr: said, exitCode: r.exitCode, failure, durationMs: elapsed })
      }
    }
    if (r.spawnError !== undefined || r.cancelled) break
  }
  return results
}
