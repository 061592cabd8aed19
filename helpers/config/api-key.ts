// The API key of a run: from `--api-key-file` / `VERIFY_API_KEY_FILE` (a file, or a pipe), or
// from `VERIFY_API_KEY` in env or .env. Never from the command line (--api-key is refused, see
// ./options.ts), never put in a message.
import { closeSync, constants, fstatSync, openSync } from 'node:fs'
import { resolve } from 'node:path'
import { readOpenFile } from '../schema/yaml-file.ts'
import { API_KEY_ENV } from './options.ts'
import { showValue } from './shell.ts'
import { MAX_VALUE, type LayerName, type OptionReader, type RawValue } from './sources.ts'

/** A key file larger than this is not a key file. */
const MAX_KEY_FILE_BYTES = 64 * 1024

/** The key's text as a file holds it: one trailing newline (LF or CRLF) dropped, nothing else touched. */
export function keyFromFileText(text: string): string {
  return text.replace(/\r?\n$/, '')
}

/** Where a value came from, ranked: an option (the command line, a targets file's entry or defaults:) beats env, env beats .env. */
function rank(layer: LayerName): number {
  return layer === 'env' ? 2 : layer === '.env' ? 1 : 3
}

/**
 * The API key, from `--api-key-file` / `VERIFY_API_KEY_FILE` or from `VERIFY_API_KEY` (env or
 * .env); the higher-ranked source wins, two at the same rank are a problem. The key is never put
 * in a message; a key file is checked (a regular, readable, non-empty file holding one token) and
 * a file others may read is warned about.
 */
export function loadApiKey(read: OptionReader, cwd: string, keyFiles?: Map<string, string>): string | null {
  const { env } = read
  const fileRaw = read.raw('api-key-file')
  const envValue = env[API_KEY_ENV]
  const keyFrom = read.envFrom(API_KEY_ENV)
  const keyRaw =
    envValue !== undefined && envValue !== ''
      ? { value: envValue, from: keyFrom, layer: (keyFrom === API_KEY_ENV ? 'env' : '.env') as LayerName }
      : undefined
  const file = fileRaw && fileRaw.value !== '' ? fileRaw : undefined
  if (file && keyRaw && rank(file.layer) === rank(keyRaw.layer)) {
    read.problem(file, `and ${keyRaw.from} both give the API key; keep one`)
    return null
  }
  const useFile = file !== undefined && (keyRaw === undefined || rank(file.layer) > rank(keyRaw.layer))
  let key: string
  let from: RawValue | string
  if (useFile) {
    from = file
    const path = resolve(cwd, file.value)
    const text = keyFiles?.get(path) ?? readKeyFile(read, file, path)
    if (text === null) return null
    keyFiles?.set(path, text)
    key = keyFromFileText(text)
    if (key === '') {
      read.problem(from, `${showValue(file.value)} is empty; it must hold the key on one line`)
      return null
    }
  } else if (keyRaw) {
    from = keyRaw.from
    key = keyRaw.value
  } else {
    return null
  }
  if (/[\s\0]/.test(key) || key.length > MAX_VALUE) {
    read.problem(from, `the key must be one token of at most ${MAX_VALUE} characters, without spaces or newlines (the key is not shown)`)
    return null
  }
  return key
}

/** The key file's text (a regular file, or a pipe read to its end, bounded), or null with its problem said. */
function readKeyFile(read: OptionReader, file: RawValue, path: string): string | null {
  try {
    // Without blocking: a named pipe nobody writes to reads as empty, never a hang.
    const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
    try {
      const st = fstatSync(fd)
      if (st.isDirectory()) {
        read.problem(file, `${showValue(file.value)} is a directory; give the file that holds the key`)
        return null
      }
      // A regular file, or a pipe (`--api-key-file <(pass show endpoint)`): read to its end, bounded.
      if (st.isFile() && (st.mode & 0o077) !== 0) {
        read.warnings.push(
          `${file.from}: ${showValue(file.value)} may be read by group or others (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}); chmod 600 it`,
        )
      }
      const got = readOpenFile(fd, MAX_KEY_FILE_BYTES)
      if ('tooLarge' in got) {
        read.problem(file, `${showValue(file.value)} holds more than ${MAX_KEY_FILE_BYTES} bytes; a key file holds one token on one line`)
        return null
      }
      if ('silentPipe' in got) {
        read.problem(
          file,
          `${showValue(file.value)} is a pipe that delivered no end of file within ${got.silentPipe}s; check the command that writes it`,
        )
        return null
      }
      return got.text
    } finally {
      closeSync(fd)
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES' || code === 'EPERM'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'is a directory'
            : (code ?? 'cannot be read')
    // A value that is no path at all may be the key itself, given here by mistake: not shown then.
    const shown =
      code === 'ENOENT' && !/[/.~]/.test(file.value)
        ? 'the value given (not shown: it does not look like a path; is it the key itself?)'
        : showValue(file.value)
    read.problem(file, `${shown} cannot be read (${why})`)
    return null
  }
}
