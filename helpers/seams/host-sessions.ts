// What one host can take at once, for every client of this process that reaches it: `--host local`
// runs at most a few programs per core at once (they are reads that mostly compute: more only
// queue for the cores), and one ssh destination at most SSH_SESSIONS sessions (sshd's MaxSessions
// is 10 per connection, its MaxStartups begins refusing at 10 unauthenticated connections). And
// ssh's master connections: one per destination and set of --ssh-opts, in a folder of this
// process's own (mode 0700), closed when the process exits.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { slots, type Slots } from './slots.ts'

export const SSH_SESSIONS = 8
export const LOCAL_SESSIONS = Math.max(4, 4 * availableParallelism())

const gates = new Map<string, Slots>()

/** The sessions gate of one host (`local`, or the ssh destination `user@host:port`). */
export function hostSessions(target: string): Slots {
  let gate = gates.get(target)
  if (!gate) {
    gate = slots(target === 'local' ? LOCAL_SESSIONS : SSH_SESSIONS)
    gates.set(target, gate)
  }
  return gate
}

let controlDir: string | null = null

/** Per master connection (ControlPath and destination): the first call, which makes it; the others start once it is done. */
const firstCalls = new Map<string, Promise<unknown>>()

/**
 * Runs `call` once the master connection of `key` is there: the first call to it runs at once (ssh
 * makes the master for it); calls asked meanwhile wait for it to end, so they ride that master
 * instead of racing it with connections of their own. A first call that failed leaves no master:
 * the next ones then try for themselves.
 */
export async function overMaster<T>(key: string, call: () => Promise<T>): Promise<T> {
  const first = firstCalls.get(key)
  if (first) {
    await first
    return call()
  }
  const made = call()
  firstCalls.set(
    key,
    made.then(
      () => undefined,
      () => undefined,
    ),
  )
  return made
}

/**
 * Ends this process's ssh master connections and forgets them (at exit; a process that serves many
 * runs calls it after each): a later run authenticates anew, never riding a connection an earlier
 * run opened with its own key and known hosts.
 */
export function closeMasters(): void {
  firstCalls.clear()
  if (!controlDir) return
  try {
    for (const name of readdirSync(controlDir)) {
      // `-O exit` asks the master on that socket to end; the destination word is not used.
      spawnSync('ssh', ['-o', `ControlPath=${join(controlDir, name)}`, '-O', 'exit', 'armproof-master'], { stdio: 'ignore', timeout: 2000 })
    }
  } catch {
    // nothing to close
  }
  rmSync(controlDir, { recursive: true, force: true })
  controlDir = null
}

/**
 * The longest ControlPath ssh can listen on: a socket's path is at most 103 bytes (macOS; 107 on
 * Linux), and ssh first binds `<ControlPath>.<16 random characters>`, then renames it.
 */
export const MAX_CONTROL_PATH = 103 - 17
const CONTROL_DIR_PREFIX = 'armproof-ssh-'

/**
 * The ControlPath in `dir` for ssh to one destination (`user@host:port`) with these --ssh-opts: a
 * master shared only by calls to the same destination made with the very same options (another
 * key or jump host gets a master of its own). A short name of our own, not ssh's %C (40
 * characters): under a long temp folder (macOS' TMPDIR is some 48) the path must still fit.
 */
export function controlPath(dir: string, target: string, sshOpts: readonly string[]): string {
  return join(
    dir,
    createHash('sha256')
      .update(JSON.stringify([target, sshOpts]))
      .digest('hex')
      .slice(0, 12),
  )
}

/**
 * The ControlPath for ssh to `target` with these --ssh-opts, in this process's folder; undefined
 * when even that short path would be too long for a socket (TMPDIR deep down): then every call
 * makes a connection of its own, slower but the same answers, where a master would fail every call.
 */
export function sshControl(target: string, sshOpts: readonly string[]): string | undefined {
  const probe = controlPath(join(tmpdir(), `${CONTROL_DIR_PREFIX}XXXXXX`), target, sshOpts)
  if (Buffer.byteLength(probe) > MAX_CONTROL_PATH) return undefined
  if (!controlDir) {
    controlDir = mkdtempSync(join(tmpdir(), CONTROL_DIR_PREFIX))
    if (!process.listeners('exit').includes(closeMasters)) process.once('exit', closeMasters)
  }
  return controlPath(controlDir, target, sshOpts)
}
