// pnpm verify --svc X --knob Y [options]: exit 0 green, 1 red, 2 configuration (before or on first contact), 3 inconclusive, 130/143 interrupted.
import { verify } from '../helpers/cli/verify.ts'

process.exitCode = await verify({ rawArgs: process.argv.slice(2), env: process.env, cwd: process.cwd(), out: process.stdout, err: process.stderr, exit: (code) => process.exit(code) })
