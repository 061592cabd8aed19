// pnpm verify --svc X --knob Y [options]: exit 0 green, 1 red, 2 configuration (before or on first contact), 3 inconclusive, 130/143 interrupted.
import { verify } from '../helpers/cli/verify.ts'

// Bound now: during the run vitest's runtime replaces process.exit with one that throws.
const exit = process.exit.bind(process)
process.exitCode = await verify({ rawArgs: process.argv.slice(2), env: process.env, cwd: process.cwd(), out: process.stdout, err: process.stderr, exit: (code) => exit(code) })
