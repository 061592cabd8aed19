// The verify host (./verify-host-pool.ts starts it): a node process that runs `verify()` (the very
// function bin/verify.ts runs) once per message, one run at a time, each as the child
// `node bin/verify.ts …` would have run it: argv[1] is bin/verify.ts (the launcher printed in
// messages is decided from it, helpers/config/invocation.ts), process.env is replaced wholesale by
// the run's, the working folder is the run's, stdout and stderr are this process's own pipes (not
// a TTY), and `exit` is this process's exit (a run that exits ends the host, as it would end the
// child); the ssh masters a run opened are closed after it, as the child's exit closes them. After a run each stream gets the host's marker line, with which its pool cuts the
// run's output from the pipe; then the exit code is sent.
import { fileURLToPath } from 'node:url'
import { startCompileCache } from '../../bin/compile-cache.mjs'

export interface HostRunMessage {
  id: number
  args: readonly string[]
  env: Record<string, string>
  cwd: string
}

export interface HostDoneMessage {
  id: number
  exitCode: number
}

const VERIFY = fileURLToPath(new URL('../../bin/verify.ts', import.meta.url))
/** The line that closes each run's output, given as this process's first argument. */
const MARKER = process.argv[2]!
const exit = process.exit.bind(process)

process.argv[1] = VERIFY
startCompileCache()
const { verify } = await import('../../helpers/cli/verify.ts')
const { closeMasters } = await import('../../helpers/seams/host-sessions.ts')

const written = (stream: NodeJS.WriteStream, text: string): Promise<void> => new Promise((resolve) => stream.write(text, () => resolve()))

function replaceEnv(env: Record<string, string>): void {
  for (const name of Object.keys(process.env)) if (!(name in env)) delete process.env[name]
  Object.assign(process.env, env)
}

async function run(m: HostRunMessage): Promise<void> {
  replaceEnv(m.env)
  process.chdir(m.cwd)
  process.argv.splice(2, Infinity, ...m.args)
  process.exitCode = undefined
  const code = await verify({
    rawArgs: m.args,
    env: process.env,
    cwd: process.cwd(),
    out: process.stdout,
    err: process.stderr,
    exit: (c) => exit(c),
  })
  // What the child's exit would have ended: its ssh masters (the next run authenticates anew).
  closeMasters()
  // The marker closes the run's output on each pipe (written after all the run wrote: pipes are synchronous here).
  await Promise.all([written(process.stdout, `\n${MARKER}\n`), written(process.stderr, `\n${MARKER}\n`)])
  process.send!({ id: m.id, exitCode: code } satisfies HostDoneMessage)
}

// Runs come one at a time (the pool waits for each); a message while one is under way is a bug of the pool.
let busy = false
process.on('message', (m: HostRunMessage) => {
  if (busy) throw new Error(`verify host: run ${m.id} sent while another was under way`)
  busy = true
  void run(m).finally(() => (busy = false))
})
// Its parent gone (the IPC channel closed: a worker, or the broker of a whole run): nothing will ask again.
process.on('disconnect', () => exit(0))
process.send!({ id: 0, exitCode: 0 } satisfies HostDoneMessage)
