// Which processes run as the engine's name (`--process`): what `pidof <name>` finds (argv[0]'s
// basename, /proc/<pid>/exe's), and what it misses: an engine that an interpreter runs as a
// script. A pip-installed vLLM runs as `…/bin/python3 …/bin/vllm serve …`: its exe is python3,
// its argv[0] the interpreter, and pidof finds nothing. The kernel names such a process after
// its script when the shebang names the interpreter's path (its comm is `vllm`: sysvinit's
// `pidof -x` finds that one); through `#!/usr/bin/env python3`, or `python3 …/bin/vllm serve`,
// its comm is the interpreter's and only its command line says which script it runs. Both are
// read here, on the host, by one shell line; the same rule in TypeScript for processes read
// another way (a listener's holder, a container's tree).

/** The interpreters whose argv[1] is the script they run (their basename, as an extended regex). */
export const INTERPRETERS = 'python[0-9.]*|pypy[0-9.]*|node|nodejs|bun|perl[0-9.]*|ruby[0-9.]*|sh|bash|dash|zsh|ksh'

const INTERPRETER_RE = new RegExp(`^(?:${INTERPRETERS})$`)

const basename = (p: string): string => p.slice(p.lastIndexOf('/') + 1)

/** Whether a program (a path, or a name) is one of `INTERPRETERS`. */
export function isInterpreter(program: string): boolean {
  return INTERPRETER_RE.test(basename(program))
}

/** The kernel's task name for `name`: at most 15 bytes (TASK_COMM_LEN 16, with its NUL). */
export const commOf = (name: string): string => name.slice(0, 15)

/** An interpreter runs a script named `name`: argv[0] is an interpreter and argv[1]'s basename is the name. */
export function runsScript(argv: readonly string[], name: string): boolean {
  return argv.length >= 2 && isInterpreter(argv[0]!) && !argv[1]!.startsWith('-') && basename(argv[1]!) === name
}

/**
 * The shell line that sets `variable` to the pids of the processes named `name`, each once,
 * between spaces: `pidof`'s, those whose task name is the name (a script started through an
 * interpreter's path), and those whose command line is an interpreter running a script of that
 * name (GNU grep's -P reads the NUL-separated /proc/<pid>/cmdline; without it, that part finds
 * nothing and the rest stands). `name` is a validated process name (`[A-Za-z0-9_.-]`), quoted here.
 */
export function namedLine(variable: string, name: string, quote: (word: string) => string): string {
  const literal = name.replaceAll('.', '\\.')
  const script = `\\A(?:[^\\x00]*/)?(?:${INTERPRETERS})\\x00(?:[^\\x00]*/)?${literal}\\x00`
  const pids = `awk '{ for (i = 1; i <= NF; i++) { p = $i; sub(/^\\/proc\\//, "", p); sub(/\\/.*/, "", p); if (p ~ /^[0-9]+$/ && !s[p]++) printf " %s", p } }'`
  return `${variable}=$( { pidof ${quote(name)}; grep -lsxF -e ${quote(commOf(name))} /proc/[0-9]*/comm; grep -alsP -e ${quote(script)} /proc/[0-9]*/cmdline; } 2>/dev/null | ${pids})`
}
