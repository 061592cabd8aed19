// /proc/<pid>/cmdline → argv, and where a flag sits in it. Pure.

/** Splits a NUL-separated cmdline (as read from /proc) into argv. */
export function parseCmdline(raw: string): string[] {
  const parts = raw.split('\0')
  if (parts.at(-1) === '') parts.pop()
  return parts
}

export interface FlagInArgv {
  /** Every value the flag was given, in order; argparse keeps the last. */
  values: string[]
  /** The flag with its value as written (`--x 1` or `--x=1`), for evidence. */
  written: string[]
}

/** Finds `--flag V` and `--flag=V` in argv (not `--flag-longer`). A bare flag at the end has value "". */
export function findFlag(argv: readonly string[], flag: string): FlagInArgv {
  const values: string[] = []
  const written: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === flag) {
      const v = argv[i + 1]
      const value = v === undefined || v.startsWith('--') ? '' : v
      values.push(value)
      written.push(value === '' ? flag : `${flag} ${value}`)
      if (value !== '') i++
    } else if (a.startsWith(`${flag}=`)) {
      values.push(a.slice(flag.length + 1))
      written.push(a)
    }
  }
  return { values, written }
}

const SECRET_FLAG = /^--?[\w-]*(key|token|secret|password|passwd)[\w-]*$/i

/** argv with the values of secret-looking flags (`--api-key X`, `--hf-token=X`) replaced by "[redacted]". */
export function redactArgv(argv: readonly string[]): string[] {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    const eq = a.indexOf('=')
    if (a.startsWith('-') && eq > 0 && SECRET_FLAG.test(a.slice(0, eq))) out.push(`${a.slice(0, eq)}=[redacted]`)
    else if (SECRET_FLAG.test(a) && i + 1 < argv.length && !argv[i + 1]!.startsWith('--')) out.push(a, '[redacted]'), i++
    else out.push(a)
  }
  return out
}

/** A line of text (a command-line echo in a log) with the values of secret-looking flags replaced by "[redacted]". */
export function redactSecretFlags(text: string): string {
  return text.replace(/(^|\s)(--?[\w-]*(?:key|token|secret|password|passwd)[\w-]*)(=|\s+)(?!-)(\S+)/gi, '$1$2$3[redacted]')
}

/** argv as one line for a message, secrets redacted, each word cut to `maxWord` characters, the whole to `max`. */
export function argvExcerpt(argv: readonly string[], max = 400, maxWord = 80): string {
  const line = redactArgv(argv).map((a) => (a.length > maxWord ? `${a.slice(0, maxWord)}…` : a)).join(' ')
  return line.length > max ? `${line.slice(0, max)}…` : line
}
