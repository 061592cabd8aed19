// `pnpm build` (run by `pnpm pack` through prepack): dist/, the JavaScript the installed package
// runs (Node does not strip types under node_modules), with the JavaScript it needs of its
// dependencies inside it, so the package installs only what a verify really loads.
//
// Why: vitest starts vite's dev server, and vite depends on lightningcss, postcss and more that a
// verify never loads (measured: scripts/build.ts's entries loaded, under a module hook, on a demo,
// a green and a red run). Bundled, only two packages stay dependencies: `rolldown`, whose native
// binding vite instantiates (its builtin plugins) at every server start, so it cannot be left out,
// and `picomatch`, which vite requires at run time by name. Each module keeps its own file
// (preserveModules): the helpers under dist/helpers/…, each dependency under dist/vendor/<package>/
// with its license file; vite's client folder and misc/ are copied because vite checks them at start.
import { copyFileSync, cpSync, existsSync, readdirSync, rmSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isProfileData, RUNTIME_DEPENDENCIES } from './build-dependencies.ts'

// rolldown's native allocator (mimalloc) asks for transparent huge pages on its arenas; where the
// kernel grants them on request (THP `madvise`, the default of many distributions) each first touch
// of 2 MB is zeroed whole: perf put 40 % of this build's CPU there (2.2–3.2 CPU-s against 1.4–1.9
// without). Off for this process, unless the caller chose; read when the native binding loads.
process.env.MIMALLOC_ALLOW_THP ??= '0'
const { build } = await import('rolldown')

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const DIST = join(ROOT, 'dist')

const OPTIONAL_PEERS = [
  '@opentelemetry/api',
  '@vitest/ui',
  '@vitest/browser',
  '@vitest/coverage',
  '@edge-runtime/vm',
  'happy-dom',
  'jsdom',
  'esbuild',
  '@vitejs/devtools',
  'msw',
  'tsx',
  'jiti',
  'lightningcss',
  'sass',
  'less',
  'stylus',
  'sugarss',
  'terser',
]

/**
 * The files the package starts by path: the command, the suites vitest imports, the verify serve
 * spawns for each run (helpers/serve/run.ts), the thread serve checks a changed targets file in
 * (helpers/serve/targets.ts), the engine the demo spawns (engine/launch.ts), the
 * CLI its docker and kubectl shims run (engine/runtime-shims.ts), and the engine's launcher, which
 * scripts/image.sh starts by path inside the image. What these import, statically
 * or not (the commands bin/armproof.ts loads, engine/profile-main.ts), the bundler follows.
 */
const ENTRIES = {
  'bin/armproof': 'bin/armproof.ts',
  'bin/verify': 'bin/verify.ts',
  'helpers/serve/targets-worker': 'helpers/serve/targets-worker.ts',
  'suites/arm.test': 'suites/arm.test.ts',
  'suites/_setup': 'suites/_setup.ts',
  'engine/radiance': 'engine/radiance.ts',
  'engine/runtime-cli': 'engine/runtime-cli.ts',
  'engine/launch': 'engine/launch.ts',
}

/** A dependency's module: its package's name and folder (the last node_modules/ of its path). */
function packageOf(id: string): { name: string; dir: string } | undefined {
  const at = id.lastIndexOf(`${sep}node_modules${sep}`)
  if (at === -1) return undefined
  const start = at + `${sep}node_modules${sep}`.length
  const parts = id.slice(start).split(sep)
  const name = parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!
  return { name, dir: id.slice(0, start) + name.split('/').join(sep) }
}

/** `…/node_modules/.pnpm/vite@8…/node_modules/vite/dist/node/x.js` → `vendor/vite/dist/node/x`; the package's own files keep their paths. */
function placed(id: string): string {
  const pkg = packageOf(id)
  const path = pkg ? `vendor/${pkg.name}/${relative(pkg.dir, id).split(sep).join('/')}` : relative(ROOT, id).split(sep).join('/')
  return path.replace(/\.(?:[cm]?[jt]s|json)$/, '')
}

/** A path under dist/ as the build names it: relative, `/` between folders. */
const inDist = (path: string): string => relative(DIST, path).split(sep).join('/')

/** Removes what under `dir` is not `kept` (a file), and the folders that leaves empty; says whether `dir` is left empty. */
function prune(dir: string, kept: (path: string) => boolean): boolean {
  let empty = true
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory() ? prune(path, kept) : !kept(inDist(path))) rmSync(path, { recursive: true, force: true })
    else empty = false
  }
  return empty
}

// The last build's dist/ is written over, not removed first: a file written again keeps its inode,
// where some 640 files removed and made anew cost ext4's inode allocator a third of the build's CPU
// (perf: ~0.5 CPU-s). What this build did not write is removed after it (prune), so dist/ ends
// holding exactly what a build into an empty folder writes.
/** Each bundled package: its name → its folder in node_modules. */
const vendored = new Map<string, string>()
const bundled = await build({
  input: Object.fromEntries(Object.entries(ENTRIES).map(([name, file]) => [name, join(ROOT, file)])),
  platform: 'node',
  external: [...RUNTIME_DEPENDENCIES.map((d) => new RegExp(`^${d}(/.*)?$`)), /^node:/],
  // What vite and vitest import only when asked for (optional peers: a DOM, a UI, esbuild, tracing):
  // never in a verify; left unresolved, said by nobody. Any other unresolved import is a warning.
  onLog(level, log, handler) {
    if (log.code === 'UNRESOLVED_IMPORT' && OPTIONAL_PEERS.some((p) => log.message.includes(`'${p}`) || log.message.includes(`"${p}`)))
      return
    handler(level, log)
  },
  output: {
    dir: DIST,
    format: 'esm',
    preserveModules: true,
    entryFileNames: (chunk) => {
      const id = chunk.facadeModuleId ?? chunk.moduleIds.at(-1) ?? chunk.name
      // The bundler's own helpers (virtual modules, ids that start with NUL).
      if (id.startsWith('\0')) return `vendor/_virtual/${id.slice(1).replace(/[^\w.-]+/g, '_')}.js`
      const pkg = packageOf(id)
      if (pkg) vendored.set(pkg.name, pkg.dir)
      return `${placed(id)}.js`
    },
    chunkFileNames: '[name].js',
  },
})

/** What this build wrote: the bundler's files, then each file copied (below). */
const written = new Set(bundled.output.map((o) => o.fileName))
const copy = (from: string, to: string): void => {
  copyFileSync(from, join(DIST, to))
  written.add(to)
}
// vite checks at start that its client entry exists, and resolves misc/ beside it: copied whole, each made anew.
const vite = vendored.get('vite')
if (!vite) throw new Error('scripts/build.ts: vite was not bundled; the build no longer matches what it copies')
const COPIED = ['dist/client', 'misc']
for (const folder of COPIED) {
  rmSync(join(DIST, 'vendor/vite', folder), { recursive: true, force: true })
  cpSync(join(vite, folder), join(DIST, 'vendor/vite', folder), { recursive: true })
}
// The built-in engine profiles are data the profile loader reads beside itself (./build-dependencies.ts).
const PROFILES = join(ROOT, 'helpers/profiles')
for (const f of readdirSync(PROFILES).filter(isProfileData)) copy(join(PROFILES, f), `helpers/profiles/${f}`)
// Every bundled package's license travels with its code.
for (const [name, dir] of vendored) {
  const license = existsSync(dir) ? readdirSync(dir).find((f) => /^(licen[cs]e|copying)/i.test(f)) : undefined
  if (!license) throw new Error(`scripts/build.ts: ${name} has no license file to ship with its bundled code`)
  copy(join(dir, license), `vendor/${name}/${license}`)
}
prune(DIST, (path) => written.has(path) || COPIED.some((folder) => path.startsWith(`vendor/vite/${folder}/`)))
process.stdout.write(
  `dist/: the package's modules and ${vendored.size} bundled dependencies (kept as dependencies: ${RUNTIME_DEPENDENCIES.join(', ')})\n`,
)
