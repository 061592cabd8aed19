// With an API key set, every mode and every output is scanned for it: terminal, JSON report,
// JUnit, the CI summary, fixtures, error messages. The engine even carries the key in its argv
// (as vLLM's --api-key does), so a red argv step would print it if anything leaked.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, test } from 'vitest'
import { startEngine } from '../fixtures/engine/launch.ts'
import { FAST, cleanup, engineArgs, runVerify, type VerifyRun } from './support/run-verify.ts'

const KEY = 'sk-armproof-secret-77aa66bb55cc'
const dir = mkdtempSync(join(tmpdir(), 'armproof-secrets-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function outputs(run: VerifyRun, summary: string): Record<string, string> {
  const read = (p: string) => {
    try {
      return readFileSync(p, 'utf8')
    } catch {
      return ''
    }
  }
  return { stdout: run.stdout, stderr: run.stderr, report: read(run.reportPath), junit: read(run.junitPath), summary: read(summary) }
}

test('the API key appears in no output of a red live run, its recording, or its replay', async () => {
  // The flag is missing from argv, so the argv step prints the command line, which holds --api-key.
  const engine = await startEngine({ svc: 'secret', processName: 'rsecret', args: ['--api-key', KEY] })
  const fixtures = join(dir, 'fixtures')
  const summary = join(dir, 'summary.md')
  const common = ['--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--api-key', KEY, '--fixtures', fixtures]
  const seen: Record<string, string> = {}
  const live = await runVerify([...engineArgs(engine), ...common, ...FAST], { engine, env: { GITHUB_STEP_SUMMARY: summary } })
  expect(live.exitCode).toBe(1)
  expect(live.stdout).toMatch(/argv failed|✗ argv/)
  for (const [k, v] of Object.entries(outputs(live, summary))) seen[`live ${k}`] = v
  const recorded = await runVerify([...engineArgs(engine), ...common, ...FAST, '--mode', 'record'], { engine })
  await engine.stop()
  expect(recorded.exitCode).toBe(1)
  for (const [k, v] of Object.entries(outputs(recorded, ''))) seen[`record ${k}`] = v
  for (const f of readdirSync(fixtures)) seen[`fixture ${f}`] = readFileSync(join(fixtures, f), 'utf8')
  const replayed = await runVerify(['--svc', engine.svc, ...common, '--mode', 'replay'])
  expect(replayed.exitCode).toBe(1)
  for (const [k, v] of Object.entries(outputs(replayed, ''))) seen[`replay ${k}`] = v
  const refused = await runVerify(['--svc', 'bad name', ...common])
  expect(refused.exitCode).toBe(2)
  for (const [k, v] of Object.entries(outputs(refused, ''))) seen[`config error ${k}`] = v

  expect(seen['live summary']).toMatch(/argv/)
  expect(seen['live stdout']).toContain('--api-key [redacted]')
  for (const [where, text] of Object.entries(seen)) expect(text, where).not.toContain(KEY)
  for (const run of [live, recorded, replayed, refused]) cleanup(run)
})
