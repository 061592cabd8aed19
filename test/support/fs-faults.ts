// Loaded with NODE_OPTIONS=--import into a `pnpm verify --mode record` run: the file system under
// one folder fails the way a real one does, without root or a mount. ARMPROOF_FS_FAULT is
// `<fault>:<folder>`:
//   EXDEV   the folder is its own mount: a rename between it and anywhere outside it fails EXDEV
//   ENOSPC  the disk under the folder is full: a write there puts down half its bytes, then fails
//   EACCES  the folder refuses this user: creating or writing anything under it fails
// The rest of the file system (vitest, the report, the temp folder) is left alone. The variable is
// read at each call, not at load: every verify host (./verify-host-pool.ts) loads this preload at
// its start and serves many runs, each with its own env, and a fault is in force only while the
// env in place names this file in its NODE_OPTIONS, as in a child started with it
// (./verify-route.ts, `imports`); without both, nothing fails.
import fs from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
import { resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { imports } from './verify-route.ts'

const SELF = fileURLToPath(import.meta.url)

/** The fault this run asks for, and whether `p` is under its folder. */
function asked(): { fault: string; under: (p: unknown) => boolean } | null {
  const spec = process.env.ARMPROOF_FS_FAULT ?? ''
  const at = spec.indexOf(':')
  // No fault asked (every write of most runs): NODE_OPTIONS is not even looked at.
  if (at <= 0 || !imports(SELF)) return null
  const folder = resolve(spec.slice(at + 1))
  return {
    fault: spec.slice(0, at),
    under: (p) => typeof p === 'string' && (resolve(p) === folder || resolve(p).startsWith(`${folder}${sep}`)),
  }
}
const fail = (code: string, syscall: string, path: string) =>
  Object.assign(new Error(`${code}: simulated by test/support/fs-faults.ts, ${syscall} '${path}'`), { code, syscall, path })

const { renameSync, writeFileSync, mkdirSync, copyFileSync } = fs
fs.renameSync = (from: fs.PathLike, to: fs.PathLike) => {
  const a = asked()
  if (a?.fault === 'EXDEV' && a.under(from) !== a.under(to)) throw fail('EXDEV', 'rename', String(from))
  renameSync(from, to)
}
fs.writeFileSync = ((path: fs.PathOrFileDescriptor, data: string | NodeJS.ArrayBufferView, options?: fs.WriteFileOptions) => {
  const a = asked()
  if (a?.fault === 'ENOSPC' && a.under(path)) {
    const text = typeof data === 'string' ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString()
    writeFileSync(path, text.slice(0, Math.floor(text.length / 2)), options)
    throw fail('ENOSPC', 'write', String(path))
  }
  if (a?.fault === 'EACCES' && a.under(path)) throw fail('EACCES', 'open', String(path))
  return writeFileSync(path, data, options)
}) as typeof fs.writeFileSync
fs.mkdirSync = ((path: fs.PathLike, options?: fs.MakeDirectoryOptions) => {
  const a = asked()
  if (a?.fault === 'EACCES' && a.under(path)) throw fail('EACCES', 'mkdir', String(path))
  return mkdirSync(path, options)
}) as typeof fs.mkdirSync
fs.copyFileSync = ((from: fs.PathLike, to: fs.PathLike, mode?: number) => {
  const a = asked()
  if (a?.fault === 'EACCES' && a.under(to)) throw fail('EACCES', 'copyfile', String(to))
  return copyFileSync(from, to, mode)
}) as typeof fs.copyFileSync
// `import { renameSync } from 'node:fs'` in the product sees the patched functions.
syncBuiltinESMExports()
