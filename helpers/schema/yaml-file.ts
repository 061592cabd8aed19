// A YAML file a person hands armproof (a targets file, an engine profile, a knob catalog), read
// the one way: bounded in size (a pipe within a few seconds), with YAML's failsafe schema (every
// scalar stays the text written: `value: 0.10` is "0.10", never 0.1), and hostile files refused,
// never obeyed: an alias cap (no "billion laughs"), no tags (`!!python/object` asks the reader to
// build something), unique keys. The lines of every node are kept, so each problem names its
// file:line. Nothing here contacts anything.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs'
// Imported, not required at first use: the built package bundles what it imports (scripts/build.ts).
// Only a file the operator gives is parsed here (a targets file, a profile, a catalog): the
// built-in profiles come as JSON (helpers/profiles/builtin.json).
import * as yaml from 'yaml'

/** Aliases a file may expand: enough for any hand-written anchor, far too few for an expansion bomb. */
export const MAX_ALIASES = 100

/** How long a pipe (`--targets <(generate-fleet)`) may take to deliver the whole file. */
const PIPE_WAIT_MS = 10_000

/** What a file is called in a problem: "the targets file", "the profile". */
export interface FileWords {
  /** "give the targets file" after "is a directory; ". */
  directory: string
  /** After "is larger than N KiB; ". */
  tooLarge: string
}

/**
 * What an open file (opened O_NONBLOCK) holds, at most `maxBytes`: its text, or that it holds
 * more, or that it is a pipe that gave no end of file within PIPE_WAIT_MS. Other errors throw.
 */
export function readOpenFile(fd: number, maxBytes: number): { text: string } | { tooLarge: true } | { silentPipe: number } {
  const buffer = Buffer.alloc(maxBytes + 1)
  const deadline = Date.now() + PIPE_WAIT_MS
  const nap = new Int32Array(new SharedArrayBuffer(4))
  let got = 0
  for (;;) {
    let n: number
    try {
      n = readSync(fd, buffer, got, buffer.length - got, null)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error
      if (Date.now() > deadline) return { silentPipe: PIPE_WAIT_MS / 1000 }
      Atomics.wait(nap, 0, 0, 20)
      continue
    }
    if (n === 0 || (got += n) >= buffer.length) break
  }
  if (got > maxBytes) return { tooLarge: true }
  return { text: buffer.subarray(0, got).toString('utf8') }
}

/**
 * The file's text, at most `maxBytes`; a problem when it cannot be read whole. Opened without
 * blocking: a named pipe nobody writes to is an empty file, never a hang; a pipe being written is
 * read to its end within PIPE_WAIT_MS.
 */
export function readBounded(path: string, maxBytes: number, words: FileWords): { text: string } | { problem: string } {
  let fd: number
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return { problem: code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (code ?? 'cannot be read') }
  }
  try {
    if (fstatSync(fd).isDirectory()) return { problem: `is a directory; ${words.directory}` }
    const read = readOpenFile(fd, maxBytes)
    if ('silentPipe' in read) return { problem: `is a pipe that delivered no end of file within ${read.silentPipe}s` }
    if ('tooLarge' in read) return { problem: `is larger than ${maxBytes / 1024} KiB; ${words.tooLarge}` }
    return read
  } catch (error) {
    return { problem: (error as NodeJS.ErrnoException).code ?? 'cannot be read' }
  } finally {
    closeSync(fd)
  }
}

/** A problem of the file's YAML itself, at its line when it has one. */
export interface YamlProblem {
  line?: number
  message: string
}

export interface YamlFile {
  /** The document: every scalar a string, mappings and lists as plain objects and arrays. */
  data: unknown
  doc: yaml.Document.Parsed
  /** The 1-based line of a character offset. */
  lineAt(offset: number): number
}

/** Parses `text` under the rules above; every problem the parser saw, each at its line, when it is refused. */
export function parseYamlFile(text: string): YamlFile | { problems: YamlProblem[] } {
  const problems: YamlProblem[] = []
  const lineCounter = new yaml.LineCounter()
  const lineAt = (offset: number): number => lineCounter.linePos(offset).line
  try {
    const doc = yaml.parseDocument(text, { schema: 'failsafe', uniqueKeys: true, prettyErrors: false, strict: true, lineCounter })
    for (const e of doc.errors.slice(0, 5))
      problems.push({ line: lineAt(e.pos[0]), message: `not valid YAML: ${e.message.split('\n')[0]}` })
    // A tag (`!!python/object`, `!custom`) asks the reader to build something: refused, never resolved.
    for (const w of doc.warnings.slice(0, 5)) problems.push({ line: lineAt(w.pos[0]), message: `refused: ${w.message.split('\n')[0]}` })
    if (problems.length > 0) return { problems }
    return { data: doc.toJS({ maxAliasCount: MAX_ALIASES }), doc, lineAt }
  } catch (error) {
    return { problems: [{ message: `refused: ${(error as Error).message.split('\n')[0]}` }] }
  }
}

/** The line of the node at `path` (keys and list indexes; a key's own line for a mapping's entry), or of the nearest node above it that exists. */
export function lineOf(file: YamlFile, path: readonly (string | number)[]): number {
  let node: unknown = file.doc.contents
  let line = yaml.isNode(node) && node.range ? file.lineAt(node.range[0]) : 1
  for (const step of path) {
    if (yaml.isMap(node)) {
      const pair = node.items.find((p) => yaml.isScalar(p.key) && String(p.key.value) === String(step))
      if (!pair) return line
      const k = pair.key as yaml.Node
      if (k.range) line = file.lineAt(k.range[0])
      node = pair.value
    } else if (yaml.isSeq(node) && typeof step === 'number') {
      node = node.items[step]
      if (!yaml.isNode(node)) return line
      if (node.range) line = file.lineAt(node.range[0])
    } else return line
  }
  return line
}
