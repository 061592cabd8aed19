// The spawner: a small Node process that starts host programs for armproof (./executor.ts). A
// fork copies the page tables of the process that forks, so in a fleet run, whose process holds
// hundreds of targets, each spawn blocked the main thread 3.5–10 ms; forked from here (some 40 MB)
// it costs about one, and never the main thread's. Each message is an ExecPlan (./exec.ts) and
// its answer the Exec, both plain data; a cancel message names a program armproof no longer
// wants, which is then ended with its group (./exec.ts, as for an aborted signal). When armproof
// goes away (the IPC channel closes) every program still running is ended with its process group,
// and the spawner exits.
import { execPlan, killAllGroups, type Exec } from './exec.ts'
import type { SpawnerAsk } from './executor.ts'

/** The programs running now, by armproof's id: what a cancel message aborts. */
const running = new Map<number, AbortController>()

process.on('message', (message: SpawnerAsk) => {
  if ('cancel' in message) {
    running.get(message.cancel)?.abort()
    return
  }
  const { id, plan } = message
  const controller = new AbortController()
  running.set(id, controller)
  void execPlan(plan, controller.signal).then((out: Exec) => {
    running.delete(id)
    process.send?.({ id, out })
  })
})

// armproof is gone: nothing will read what the programs print.
process.on('disconnect', () => {
  killAllGroups()
  process.exit(0)
})
