// python3 for the tests that check armproof against Python's own behaviour (argparse, repr,
// prometheus_client's formulas): the interpreter python3 on PATH starts, found once per process.
// python3 on PATH may be a wrapper, pyenv's shim among them: a chain of bash scripts at each
// start (here about 140 ms of CPU against 50 ms for the interpreter itself).
import { execFileSync } from 'node:child_process'

let found: string | undefined

/** The interpreter's own path (sys.executable of python3 on PATH). */
export function pythonBin(): string {
  found ??= execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim()
  if (found === '') throw new Error('python3 printed no sys.executable')
  return found
}

/** Runs python3 on `script` with `input` (as JSON) on stdin, returning its stdout parsed as JSON. */
export function python(script: string, input: unknown): any {
  return JSON.parse(execFileSync(pythonBin(), ['-c', script], { input: JSON.stringify(input), encoding: 'utf8', timeout: 20_000 }))
}
