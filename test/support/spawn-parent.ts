// Run by test/seams/host-batch.test.ts in a process of its own: holds `argv[2]` MiB resident,
// then asks a local host read for its parent pid, and prints `{ pid, parent, rss }` as JSON: the
// host program's parent is this process, or the spawner (helpers/seams/executor.ts, LARGE_RSS).
import { createHost } from '../../helpers/seams/host.ts'

const held: Buffer[] = []
for (let i = 0; i < Number(process.argv[2] ?? 0); i++) held.push(Buffer.alloc(2 ** 20, 1))
const rss = process.memoryUsage.rss()
const host = createHost({ host: { kind: 'local' }, sshOpts: [], deployUser: null })
const read = await host.run({ script: 'echo "$PPID"', timeoutMs: 10_000 })
process.stdout.write(`${JSON.stringify({ pid: process.pid, parent: Number(read.stdout.trim()), rss, held: held.length })}\n`)
process.exit(0)
