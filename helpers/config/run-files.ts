// The files a run names: the fixtures folder (its default `fixtures/<svc>/<knob>`), the outputs
// (--report, --junit, --summary: checked writable before the run by ./outputs.ts), the CA file
// of an https endpoint (read now: it must hold a PEM certificate), and --force, which lets a
// recording replace a fixtures folder holding another run.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { showValue } from './shell.ts'
import type { OptionReader } from './sources.ts'

/** The files of a run, as the Target (./load.ts) carries them. */
export interface RunFiles {
  fixtures: string
  report: string | null
  junit: string | null
  /** --summary: the Markdown summary's path. */
  summary: string | null
  /** --ca-file: a PEM file of extra CAs for an https endpoint (read when the seams open), resolved against `cwd`. */
  caFile: string | null
  /** --force: record mode may overwrite a fixture folder that holds another run. */
  force: boolean
}

export function readFiles(read: OptionReader, svc: string, knobName: string | undefined, cwd: string): RunFiles {
  const pathOption = (flag: 'fixtures' | 'report' | 'junit' | 'summary' | 'ca-file'): string | null => read.raw(flag)?.value || null
  const fixtures = pathOption('fixtures') ?? `fixtures/${svc || '<svc>'}/${knobName ?? '<knob>'}`
  const report = pathOption('report')
  const junit = pathOption('junit')
  const summary = pathOption('summary')
  const caFile = pathOption('ca-file')
  if (caFile) {
    const caFrom = read.raw('ca-file')!
    try {
      const pem = readFileSync(resolve(cwd, caFile), 'utf8')
      if (!/-----BEGIN CERTIFICATE-----/.test(pem))
        read.problem(caFrom, `${showValue(caFile)} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      read.problem(caFrom, `${showValue(caFile)} cannot be read (${code === 'ENOENT' ? 'no such file' : (code ?? 'error')})`)
    }
  }
  const force = read.switchOrEnv('force', 'VERIFY_FORCE')

  return { fixtures, report, junit, summary, caFile: caFile === null ? null : resolve(cwd, caFile), force }
}
