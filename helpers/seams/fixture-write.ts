// Writes a recording (./recording-files.ts) so that an observed verdict is never lost to it
// and nothing half-written is left. Each file is first written whole as a temp file inside the
// fixtures folder itself, so the swap is a rename within one folder: a folder that is its own
// mount point never meets a rename across file systems (EXDEV); a file that is a bind mount of its
// own is copied over in place instead. A full disk (ENOSPC), a refused folder (EACCES, EROFS)
// fail while the temp files are written, before anything the folder held is touched; the temp
// files are removed. run.json is the recording's commit point: the old one goes first and the new
// one comes last, so a swap cut short leaves a folder that holds no recording, never a mix. A
// failure is a FixturesUnwritten error: the run's verdict stands, and pnpm verify exits 4.
import { copyFileSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { FIXTURE_FILES, type FixtureSet, type RunMeta } from './recording-files.ts'
import { fileDigests, runDigest, stableJson } from './digest.ts'

/** The file-system calls of the writer: a seam, so a test can make them fail as a full or foreign disk does. */
export interface FixtureFs {
  mkdir(path: string): void
  writeFile(path: string, text: string): void
  rename(from: string, to: string): void
  copyFile(from: string, to: string): void
  rm(path: string): void
  readFile(path: string): string
}

export const nodeFixtureFs: FixtureFs = {
  mkdir: (path) => void mkdirSync(path, { recursive: true }),
  writeFile: (path, text) => writeFileSync(path, text),
  rename: (from, to) => renameSync(from, to),
  copyFile: (from, to) => copyFileSync(from, to),
  rm: (path) => rmSync(path, { force: true }),
  readFile: (path) => readFileSync(path, 'utf8'),
}

/** The fixtures could not be written (or a secret would have landed in them): the verdict stands, the recording does not. */
export class FixturesUnwritten extends Error {
  readonly code = 'ARMPROOF_FIXTURES_UNWRITTEN'
  override readonly name = 'FixturesUnwritten'
}

const errno = (error: unknown) => (error as NodeJS.ErrnoException).code ?? (error as Error).message

/** The file's new content swapped in from `temp`, within its folder; a file mounted on its own (EXDEV, EBUSY) is copied over instead. */
function swap(fs: FixtureFs, temp: string, path: string): void {
  try {
    fs.rename(temp, path)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'EXDEV' && code !== 'EBUSY') throw error
    fs.copyFile(temp, path)
    fs.rm(temp)
  }
}

/** Writes `files` (name → text) into `folder` as one recording: all or, where the disk says no, nothing new. */
function writeRecordingFiles(
  folder: string,
  files: Readonly<Record<(typeof FIXTURE_FILES)[number], string>>,
  fs: FixtureFs = nodeFixtureFs,
): void {
  const temps = FIXTURE_FILES.map((name) => ({
    name,
    temp: join(folder, `.${name}.armproof-${process.pid}.tmp`),
    path: join(folder, name),
  }))
  try {
    fs.mkdir(folder)
    for (const t of temps) fs.writeFile(t.temp, files[t.name])
  } catch (error) {
    for (const t of temps) tryRm(fs, t.temp)
    throw new FixturesUnwritten(`could not write the fixtures to ${folder} (${errno(error)}); no fixture file was written or replaced`)
  }
  // run.json last: until it is there, the folder holds no recording.
  const order = [...temps.filter((t) => t.name !== 'run.json'), temps.find((t) => t.name === 'run.json')!]
  let swapped = 0
  try {
    fs.rm(join(folder, 'run.json'))
    for (const t of order) {
      swap(fs, t.temp, t.path)
      swapped++
    }
  } catch (error) {
    for (const t of order.slice(swapped)) tryRm(fs, t.temp)
    throw new FixturesUnwritten(
      `could not put the fixtures in place in ${folder} (${errno(error)}); the folder now holds no recording (no run.json)`,
    )
  }
}

function tryRm(fs: FixtureFs, path: string): void {
  try {
    fs.rm(path)
  } catch {
    // what cannot be removed is named by the error the caller throws
  }
}

/** The texts of a fixture set as written, with their digests; refused (nothing written) when a secret would land in one. */
export function fixtureTexts(folder: string, set: FixtureSet, secrets: readonly string[]): Record<(typeof FIXTURE_FILES)[number], string> {
  const http = stableJson(set.http)
  const host = stableJson(set.host)
  const meta = { ...set.meta, digests: fileDigests(set.meta, { 'http.json': http, 'host.json': host }) }
  const files = { 'run.json': stableJson(meta), 'http.json': http, 'host.json': host }
  for (const [name, text] of Object.entries(files)) {
    for (const secret of secrets) {
      if (secret.length >= 4 && text.includes(secret))
        throw new FixturesUnwritten(`refusing to record: the API key would land in ${join(folder, name)}; nothing was written`)
    }
    if (/authorization"?\s*:\s*"bearer\s+(?!\[redacted\])/i.test(text)) {
      throw new FixturesUnwritten(`refusing to record: a bearer token would land in ${join(folder, name)}; nothing was written`)
    }
  }
  return files
}

/** Writes a fixture set, refusing if a secret would land in a file: nothing is written then. */
export function writeFixtures(folder: string, set: FixtureSet, secrets: readonly string[], fs: FixtureFs = nodeFixtureFs): void {
  writeRecordingFiles(folder, fixtureTexts(folder, set, secrets), fs)
}

/**
 * After a recorded run: notes its verdict and each step's in run.json (replay must reach the same)
 * and seals the file's digest again, through the same swap. When that cannot be written the
 * recording is removed (a recording without its verdict replays to nothing) and FixturesUnwritten
 * says so.
 */
export function markRecordedVerdict(
  folder: string,
  verdict: string,
  steps: Readonly<Record<string, string>> = {},
  fs: FixtureFs = nodeFixtureFs,
): void {
  const path = join(folder, 'run.json')
  let meta: RunMeta
  try {
    meta = JSON.parse(fs.readFile(path)) as RunMeta
  } catch (error) {
    throw new FixturesUnwritten(`could not read ${path} back to note the recorded verdict (${errno(error)})`)
  }
  const next: RunMeta = { ...meta, verdict, steps: { ...steps } }
  if (meta.digests) next.digests = { ...meta.digests, 'run.json': runDigest(next) }
  const temp = join(folder, `.run.json.armproof-${process.pid}.tmp`)
  try {
    fs.writeFile(temp, stableJson(next))
    swap(fs, temp, path)
  } catch (error) {
    tryRm(fs, temp)
    for (const name of FIXTURE_FILES) tryRm(fs, join(folder, name))
    throw new FixturesUnwritten(
      `could not note the recorded verdict in ${path} (${errno(error)}); the recording was removed: one without its verdict does not replay`,
    )
  }
}
