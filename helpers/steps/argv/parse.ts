// An engine's argv for messages and evidence: secret-looking flags' values redacted, long words cut. Pure.
// (argv itself comes from /proc/<pid>/cmdline via helpers/engine/proc.ts; where a flag sits in it,
// as the engine's parser reads it, is helpers/argparse/resolve.ts.)

const SECRET_FLAG = /^--?[\w-]*(key|token|secret|password|passwd)[\w-]*$/i

/** A flag (`--api-key`) or variable (`HF_TOKEN`) whose value is a secret by its name: never shown, never recorded. */
export function isSecretName(name: string): boolean {
  return SECRET_FLAG.test(name.startsWith('-') ? name : `--${name.replace(/^\$/, '')}`)
}

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
  const line = redactArgv(argv)
    .map((a) => (a.length > maxWord ? `${a.slice(0, maxWord)}…` : a))
    .join(' ')
  return line.length > max ? `${line.slice(0, max)}…` : line
}
