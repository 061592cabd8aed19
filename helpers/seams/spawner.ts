// The spawner: a small Node process that starts host programs for armproof (./executor.ts). A
// fork copies the page tables of the process that forks, so in a fleet run, whose process holds
// hundreds of targets, each spawn blocked the main thread 3.5–10 ms; forked from here (some 40 MB)
// it costs about one, and never the main thread's. Each message is an ExecPlan (./exec.ts) and
// its answer the Exec, both plain data. When armproof goes away (the IPC channel closes) every
// program still running is ended with its process group, and the spawner exits.
import { execPlan, killAllGroups, type Exec, type ExecPlan } from './exec.ts'

interface Ask {
  id: number
  plan: ExecPlan
}

process.on('message', (message: Ask) => {
  void execPlan(message.plan).then((out: Exec) => process.send?.({ id: message.id, out }))
})

// armproof is gone: nothing will read what the programs print.
process.on('disconnect', () => {
  killAllGroups()
  process.exit(0)
})
