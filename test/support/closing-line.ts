// A vitest reporter that ends the run with one plain line, "N passed, N failed, N skipped", which
// CI systems read where they do not know vitest's own summary. Tests skipped with a note (a
// missing prerequisite, test/support/prerequisites.ts) are listed above it, one line per note, so
// "not run, and why, and what to install" is not lost among the passes. A file that failed outside
// its tests (a beforeAll that threw, an import that failed: its tests are only skipped) and an
// error no test caught are counted on the same line, so it never reads as all passed.
import type { Reporter, TestModule } from 'vitest/node'

export default class ClosingLine implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown> = []): void {
    let passed = 0
    let failed = 0
    let skipped = 0
    let filesFailed = 0
    const notes = new Map<string, number>()
    for (const m of modules) {
      let testFailed = false
      for (const t of m.children.allTests()) {
        const result = t.result()
        if (result.state === 'passed') passed++
        else if (result.state === 'failed') {
          failed++
          testFailed = true
        } else {
          skipped++
          if (result.state === 'skipped' && result.note) {
            const key = `${m.relativeModuleId}: ${result.note}`
            notes.set(key, (notes.get(key) ?? 0) + 1)
          }
        }
      }
      if (m.state() === 'failed' && !testFailed) filesFailed++
    }
    for (const [note, count] of notes) process.stdout.write(`\n${count} test(s) in ${note}`)
    const outside = [
      ...(filesFailed > 0 ? [`${filesFailed} file(s) failed outside their tests`] : []),
      ...(unhandledErrors.length > 0 ? [`${unhandledErrors.length} error(s) outside any test`] : []),
    ]
    process.stdout.write(`\ntests: ${[`${passed} passed`, `${failed} failed`, `${skipped} skipped`, ...outside].join(', ')}\n`)
  }
}
