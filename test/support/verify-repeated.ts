// A child process that runs `verify()` (with the real suites, in this process's in-process pool)
// several times over, as a process that serves many runs would: `ARMPROOF_REPEAT` runs of the argv
// given, each its own report under `ARMPROOF_REPEAT_DIR`. Prints one line per run: its exit code and
// its closing `steps:` line. Started by test/cli/in-process-pool.test.ts.
import { join } from 'node:path'
import { verify } from '../../helpers/cli/verify.ts'

const times = Number(process.env.ARMPROOF_REPEAT)
const dir = process.env.ARMPROOF_REPEAT_DIR!
const exit = process.exit.bind(process)
for (let i = 0; i < times; i++) {
  let out = ''
  const code = await verify({
    rawArgs: [...process.argv.slice(2), '--report', join(dir, `report-${i}.json`)],
    env: process.env,
    cwd: process.cwd(),
    out: { write: (t: string) => (out += t) },
    err: process.stderr,
    exit: (c) => exit(c),
  })
  process.stdout.write(`run ${i}: exit ${code} · ${out.match(/^steps: .*$/m)?.[0] ?? out}\n`)
}
exit(0)
