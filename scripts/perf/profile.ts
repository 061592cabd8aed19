// Where a command's milliseconds go: its main thread's `node --cpu-prof` profile, each sample
// put in one bucket: compiling code (V8's compile of ES modules and CommonJS, Node's own
// bootstrap modules, the type stripping of .ts files), the code of armproof, of undici, of vitest
// and the tools it brings (vite, rolldown, chai, …), Node's own code (resolving and reading
// modules, fs, process start), garbage collection, and idle (the thread waiting: for a child
// process, a socket, a timer, a worker).
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string }
  children?: number[]
}

interface CpuProfile {
  nodes: ProfileNode[]
  startTime: number
  endTime: number
  samples: number[]
}

export interface Breakdown {
  /** The profile's span: from early in Node's start to the exit, ms. */
  totalMs: number
  /** [bucket, ms], largest first. */
  parts: Array<[string, number]>
}

const COMPILE = new Set([
  'compileSourceTextModule',
  'wrapSafe',
  'compileForInternalLoader',
  'compileFunction',
  'compileFunctionForCJSLoader',
])
const VITEST =
  /^(?:vitest|vite|rolldown|@vitest|@rolldown|chai|tinypool|tinyspy|tinybench|tinyglobby|tinyrainbow|tinyexec|picomatch|fdir|magic-string|estree-walker|es-module-lexer|expect-type|pathe|std-env|obug|@jridgewell|pathval|loupe|deep-eql|assertion-error|check-error)/

const NODE = "Node's own code (module resolution and loading, fs, start)"

/** The bucket of a frame's script; undefined for a frame without one (V8's builtins), which takes its caller's. */
function bucketOf(url: string, root: string): string | undefined {
  if (url === '') return undefined
  const pkg = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1]
  if (pkg) return pkg === 'undici' ? 'undici' : VITEST.test(pkg) ? 'vitest, vite and their tools' : 'other packages'
  if (url.startsWith(`file://${root}`)) return 'armproof'
  return NODE
}

/** The breakdown of the main thread's profile among the `.cpuprofile` files in `dir` (the longest one). */
export function breakdown(dir: string, root: string): Breakdown {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))
  const profiles = files.map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as CpuProfile)
  const p = profiles.sort((a, b) => b.endTime - b.startTime - (a.endTime - a.startTime))[0]
  if (!p) throw new Error(`no .cpuprofile in ${dir}`)
  const byId = new Map(p.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const counts = new Map<string, number>()
  for (const id of p.samples) {
    const leaf = byId.get(id)!.callFrame
    let bucket: string | undefined
    if (leaf.functionName === '(idle)') bucket = 'idle (waiting for a child process, a socket, a timer)'
    else if (leaf.functionName === '(garbage collector)') bucket = 'garbage collection'
    else if (COMPILE.has(leaf.functionName) || leaf.url.includes('amaro') || leaf.url.startsWith('wasm://'))
      bucket = 'compiling (modules, type stripping)'
    else
      for (let x: number | undefined = id; x !== undefined && !bucket; x = parent.get(x))
        bucket = bucketOf(byId.get(x)!.callFrame.url, root)
    bucket ??= NODE
    counts.set(bucket, (counts.get(bucket) ?? 0) + 1)
  }
  const totalMs = (p.endTime - p.startTime) / 1000
  const parts = [...counts].map(([k, n]): [string, number] => [k, (n / p.samples.length) * totalMs]).sort((a, b) => b[1] - a[1])
  return { totalMs, parts }
}
