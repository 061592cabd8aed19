// A writeback in its own process, driven over IPC by test/support/writeback-race.ts: it waits for
// "go" (so twenty processes start writing at the same moment), runs `writeback()` with real files,
// and answers with its exit code. With `pauseBeforeRename` it writes the temp file, says "paused"
// and waits forever before the rename, so the test can SIGKILL it at that exact point. Its
// compiled modules go to $NODE_COMPILE_CACHE (when set) before "ready", for the workers after it.
import { flushCompileCache } from 'node:module'
import { nodeFs, type WritebackFs } from '../../helpers/writeback/atomic.ts'
import { writeback } from '../../helpers/writeback/command.ts'

interface Go {
  type: 'go'
  args: string[]
  cwd: string
  pauseBeforeRename?: boolean
}

const send = (m: unknown) => process.send!(m)

process.on('message', (m: Go | { type: 'exit' }) => {
  if (m.type === 'exit') process.exit(0)
  if (m.type !== 'go') return
  const fs: WritebackFs = m.pauseBeforeRename
    ? {
        ...nodeFs,
        rename: () => {
          send({ type: 'paused' })
          return new Promise(() => {})
        },
      }
    : nodeFs
  let out = ''
  let err = ''
  void writeback({
    rawArgs: m.args,
    env: {},
    cwd: m.cwd,
    out: { write: (t: string) => (out += t) },
    err: { write: (t: string) => (err += t) },
    fs,
  }).then((code) => send({ type: 'done', code, out, err }))
})
flushCompileCache()
send({ type: 'ready' })
