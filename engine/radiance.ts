// radiance reference engine: `node engine/radiance.ts [flags]`.
// Parses flags (exit 2 on config_parse errors), prints the boot ledger, keeps the port closed
// for --load-closed-ms, then serves (503 for --load-503-ms, then ready).
import type { Server } from 'node:http'
import { FLEET_ENV, PROFILE_ENV, STANDBY_ENV } from './env.ts'
import { readFlags } from './flags.ts'
import { bootOutput, ledgerLines, logLine, startingLine } from './ledger.ts'
import { markBooted, watchParent } from './parent.ts'
import { buildServer } from './server.ts'
import { createState } from './state.ts'

function out(line: string): void {
  process.stdout.write(`${line}\n`)
}

async function main(argv: readonly string[]): Promise<void> {
  const parsed = await readFlags(argv)
  // --help and a fleet import their modules when asked: an engine's start imports only what it runs.
  if (parsed.kind === 'help') {
    process.stdout.write((await import('./help.ts')).helpText(parsed.faults))
    process.exit(0)
  }
  if (parsed.kind === 'error') {
    for (const error of parsed.errors) process.stderr.write(`config_parse: ${error}\n`)
    process.exit(2)
  }
  const { config } = parsed
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0))
  const echoed = argv.filter((a, i) => a !== '--fault' && argv[i - 1] !== '--fault' && !a.startsWith('--fault='))
  if (process.env[FLEET_ENV]) {
    ;(await import('./fleet-main.ts')).runFleet(config, echoed)
    return
  }
  watchParent()
  const state = createState(config)
  for (const chunk of bootOutput(config, echoed)) process.stdout.write(chunk)
  markBooted()
  let listenedAt = Number.POSITIVE_INFINITY
  const server: Server = buildServer(state, () => listenedAt)
  if (config.faults.has('never_listen') || process.env[STANDBY_ENV] === '1') {
    setInterval(() => {}, 1 << 30)
    return
  }
  server.on('error', (error: NodeJS.ErrnoException) => {
    process.stderr.write(
      `${logLine('api_server.py:1040', `cannot listen on ${config.host}:${config.port}: ${error.code ?? error.message}`).replace(/^INFO/, 'ERROR')}\n`,
    )
    process.exit(1)
  })
  setTimeout(() => {
    server.listen(config.port, config.host, () => {
      listenedAt = Date.now()
      const address = server.address()
      out(startingLine(config.host, typeof address === 'object' && address ? address.port : config.port))
      if (config.faults.has('ledger_after_load')) setTimeout(() => out(ledgerLines(config).slice(1).join('\n')), config.load503Ms)
    })
  }, config.loadClosedMs)
}

// `--profile vllm|sglang|llama.cpp` first on the command line (or RADIANCE_REF_PROFILE, which the
// launcher sets so the process's argv stays the engine's own) runs that engine's emulation instead.
const argv = process.argv.slice(2)
const profileFlag = argv[0] === '--profile' ? argv[1] : argv[0]?.startsWith('--profile=') ? argv[0].slice('--profile='.length) : undefined
const profile = profileFlag ?? process.env[PROFILE_ENV] ?? 'radiance'
const rest = profileFlag === undefined ? argv : argv.slice(argv[0] === '--profile' ? 2 : 1)
if (profile === 'radiance') await main(rest)
else await (await import('./profile-main.ts')).runProfile(profile, rest)
