// An env file as the readers of one agree on it: systemd's EnvironmentFile=, podman's and docker's
// --env-file, and dotenv each read some lines their own way (quotes: systemd and dotenv strip them,
// docker keeps them; `export `: dotenv takes it, the others do not; ` #` after a value: dotenv cuts
// a comment there, the others keep it). Only the subset all of them read alike is read; any other
// line is named (its number and why, never its value) and the file is not judged. Pure.

/** One variable the file sets (the last line wins, as every reader does). */
export interface EnvEntry {
  name: string
  value: string
  line: number
}

/** A line outside the common subset: its number and why (no value). */
export interface EnvLineProblem {
  line: number
  why: string
}

export interface EnvFile {
  vars: Map<string, EnvEntry>
  /** Names set on more than one line (the last wins). */
  duplicates: string[]
  problems: EnvLineProblem[]
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/** Why the line `NAME=VALUE` is outside the subset, or undefined when every reader reads it alike. */
function lineProblem(line: string): string | undefined {
  const eq = line.indexOf('=')
  if (/^\s*export\s/.test(line)) return "`export` is dotenv's; systemd and podman read it as part of the name: write NAME=value"
  if (eq < 0) return "not NAME=value (a bare name is read from the caller's environment by docker, and refused by systemd)"
  const name = line.slice(0, eq)
  const value = line.slice(eq + 1)
  if (!NAME.test(name))
    return /\s/.test(name)
      ? 'space around the name or before "=": readers disagree; write NAME=value'
      : 'the name is not [A-Za-z_][A-Za-z0-9_]*'
  if (/^\s|\s$/.test(value)) return 'the value starts or ends with a space (systemd and dotenv trim it, docker keeps it)'
  if (/^["'`]/.test(value)) return 'a quoted value (systemd and dotenv strip the quotes, docker and podman keep them): write it unquoted'
  if (value.includes('\\')) return 'a backslash (systemd reads escapes and continuations, docker does not)'
  if (value.includes('#')) return 'a "#" in the value (dotenv cuts a comment there, the others keep it)'
  return undefined
}

/** The file's variables, its duplicate names, and each line outside the common subset. */
export function parseEnvFile(text: string): EnvFile {
  const vars = new Map<string, EnvEntry>()
  const duplicates = new Set<string>()
  const problems: EnvLineProblem[] = []
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  lines.forEach((raw, i) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw
    const n = i + 1
    if (line.trim() === '' || /^\s*#/.test(line)) return
    if (/^\s*;/.test(line)) return void problems.push({ line: n, why: 'a ";" comment is systemd\'s alone; write it with "#"' })
    if (line.includes('\0')) return void problems.push({ line: n, why: 'a NUL byte' })
    const why = lineProblem(line)
    if (why) return void problems.push({ line: n, why })
    const eq = line.indexOf('=')
    const name = line.slice(0, eq)
    if (vars.has(name)) duplicates.add(name)
    vars.set(name, { name, value: line.slice(eq + 1), line: n })
  })
  return { vars, duplicates: [...duplicates], problems }
}

/** `NAME=VALUE\0…` (a /proc/<pid>/environ) as a map; an entry without "=" is kept with an empty value, the last of a name wins. */
export function parseEnviron(bytes: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const entry of bytes.split('\0')) {
    if (entry === '') continue
    const eq = entry.indexOf('=')
    if (eq <= 0) continue
    out.set(entry.slice(0, eq), entry.slice(eq + 1))
  }
  return out
}

/** Hex pairs (as `od -An -v -tx1` prints them, spaces and newlines between) back to the text they encode, UTF-8. */
export function fromOdHex(text: string): string | undefined {
  const hex = text.replace(/\s+/g, '')
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(hex)) return undefined
  return Buffer.from(hex, 'hex').toString('utf8')
}
