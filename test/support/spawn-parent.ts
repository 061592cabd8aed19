// Run by test/seams/host-batch.test.ts in a process of its own: holds `argv[2]` MiB resident,
// then asks two local host reads, one after the other, for their parent pid, and prints
// `{ pid, parent, again, rss }` as JSON: each host program's parent is this process, or the
// spawner (helpers/seams/executor.ts, LARGE_RSS), the same one for both.
import { createHost } from '../../helpers/seams/host.ts'

const held: Buffer[] = []
for (let i = 0; i < Number(process.argv[2] ?? 0); i++) held.push(Buffer.alloc(2 ** 20, 1))
const rss = process.memoryUsage.rss()
const host = createHost({ host: { kind: 'local' }, sshOpts: [], deployUser: null })
const parentOf = async (): Promise<number> => Number((await host.run({ script: 'echo "$PPID"', timeoutMs: 10_000 })).stdout.trim())
const parent = await parentOf()
const again = await parentOf()
process.stdout.write(`${JSON.stringify({ pid: process.pid, parent, again, rss, held: held.length })}\n`)
process.exit(0)
