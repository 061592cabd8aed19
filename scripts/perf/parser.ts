// Measure 4: helpers/prom/parse.ts against parse-prometheus-text-format on generated vLLM-shaped pages
// and on one line of 100,000 labels, each parser in its own child process per round (no shared
// heap), rounds alternating which goes first so background load on the shared cores hits all alike.
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ChildResult, ParserName } from './parser-child.ts'
import { vllmPage, wideLine } from './prom-page.ts'
import { median } from './stats.ts'

const CHILD = fileURLToPath(new URL('./parser-child.ts', import.meta.url))

export interface ParserSide {
  /** Every warm sample (ms per parse) from every round. */
  warmMs: number[]
  /** The same samples in main-thread CPU ms. */
  warmCpuMs: number[]
  coldMs: number[]
  /** Peak RSS during the first parse minus RSS before it, MiB, per round. */
  peakDeltaMiB: number[]
  peakRssMiB: number[]
  retainedMiB: number[]
  found: ChildResult['found']
}

export interface ParserSize {
  label: string
  /** 'page': a vLLM-shaped page; 'wide': one sample line of 100,000 labels. */
  kind: 'page' | 'wide'
  bytes: number
  series: number
  ours: ParserSide
  /** helpers/prom/parse.ts, then every family's samples and every sample's labels read (what the npm parser hands back). */
  oursRead: ParserSide
  npm: ParserSide
  /** helpers/prom/parse.ts with the meter step's `keep` filter: informational, not the like-for-like comparison. */
  oursKeep: ParserSide
}

export interface ParserResult {
  sizes: ParserSize[]
  rounds: number
  samplesPerRound: number
}

function child(parser: ParserName, file: string, samples: number): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--expose-gc', CHILD, parser, file, String(samples)],
      { encoding: 'utf8', timeout: 120_000, maxBuffer: 1 << 20 },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`parser child ${parser} ${file}: ${error.message}\n${stderr.slice(-2000)}`))
        try {
          resolve(JSON.parse(stdout.trim()) as ChildResult)
        } catch {
          reject(new Error(`parser child ${parser}: unreadable output ${stdout.slice(0, 500)}`))
        }
      },
    )
  })
}

function side(): ParserSide {
  return { warmMs: [], warmCpuMs: [], coldMs: [], peakDeltaMiB: [], peakRssMiB: [], retainedMiB: [], found: { families: 0 } }
}

export async function measureParser(options: {
  rounds: number
  samplesPerRound: number
  log: (line: string) => void
}): Promise<ParserResult> {
  const { rounds, samplesPerRound, log } = options
  const dir = mkdtempSync(join(tmpdir(), 'armproof-perf-prom-'))
  try {
    const sizes: ParserSize[] = []
    const pages = [
      ['1 MB', 'page', vllmPage(1_000_000)],
      ['30 MB', 'page', vllmPage(30_000_000)],
      ['one 1 MB line of 100,000 labels', 'wide', { text: wideLine(100_000), series: 1 }],
    ] as const
    for (const [label, kind, page] of pages) {
      const file = join(dir, `page-${sizes.length}.prom`)
      writeFileSync(file, page.text, 'latin1')
      const size: ParserSize = {
        label,
        kind,
        bytes: page.text.length,
        series: page.series,
        ours: side(),
        oursRead: side(),
        npm: side(),
        oursKeep: side(),
      }
      for (let r = 0; r < rounds; r++) {
        const order: ParserName[] = r % 2 === 0 ? ['ours', 'npm', 'ours-read', 'ours-keep'] : ['npm', 'ours', 'ours-read', 'ours-keep']
        for (const parser of order) {
          const res = await child(parser, file, options.samplesPerRound)
          if (parser !== 'npm' && res.found.errors !== 0)
            throw new Error(`helpers/prom/parse.ts reported ${res.found.errors} malformed lines on the generated ${label} page`)
          const s = parser === 'ours-keep' ? size.oursKeep : parser === 'ours-read' ? size.oursRead : size[parser]
          s.warmMs.push(...res.warmMs)
          s.warmCpuMs.push(...res.warmCpuMs)
          s.coldMs.push(res.coldMs)
          s.peakDeltaMiB.push(res.peakRssMiB - res.rssBeforeMiB)
          s.peakRssMiB.push(res.peakRssMiB)
          s.retainedMiB.push(res.retainedMiB)
          s.found = res.found
        }
      }
      log(
        `  parser ${label}: ours ${median(size.ours.warmMs).toFixed(1)} ms (${(size.bytes / 1000 / median(size.ours.warmMs)).toFixed(0)} MB/s), every sample read ${median(size.oursRead.warmMs).toFixed(1)} ms, npm ${median(size.npm.warmMs).toFixed(1)} ms per parse; ours with keep ${median(size.oursKeep.warmMs).toFixed(1)} ms`,
      )
      sizes.push(size)
    }
    return { sizes, rounds, samplesPerRound }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
