// radiance reference engine: `node engine/radiance.ts [flags]`.
// Parses flags (exit 2 on config_parse errors), prints the boot ledger, keeps the port closed
// for --load-closed-ms, then serves (503 for --load-503-ms, then ready).
import { rmSync, writeFileSync } from 'node:fs'
import type { Server } from 'node:http'
import { join } from 'node:path'
import { PARENT_ENV, ROOT_ENV, STANDBY_ENV, bootedMarker } from './env.ts'
import { parseFlags } from './flags.ts'
import { helpText } from './help.ts'
import { bootOutput, logLine, startingLine } from './ledger.ts'
import { buildServer } from './server.ts'
import { createState } from './state.ts'


function out(line: string): void {
  process.stdout.write(`${line}\n`)
}

function watchParent(): void {
  const parent = Number(process.env[PARENT_ENV])
  if (!Number.isInteger(parent) || parent <= 0) return
  setInterval(() => {
    try {
      process.kill(parent, 0)
    } catch {
      const root = process.env[ROOT_ENV]
      if (root) rmSync(root, { recursive: true, force: true })
      process.exit(0)
    }
  }, 500).unref()
}

function main(argv: readonly string[]): void {
  const parsed = parseFlags(argv)
  if (parsed.kind === 'help') {
    process.stdout.write(helpText(parsed.faults))
    process.exit(0)
  }
  if (parsed.kind === 'error') {
    for (const error of parsed.errors) process.stderr.write(`config_parse: ${error}\n`)
    process.exit(2)
  }
  const { config } = parsed
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0))
  watchParent()
  const state = createState(config)
  const echoed = argv.filter((a, i) => a !== '--fault' && argv[i - 1] !== '--fault' && !a.startsWith('--fault='))
  for (const chunk of bootOutput(config, echoed)) process.stdout.write(chunk)
  // Launched by engine/launch.ts: say the boot output is in the log (stdout to a file is written synchronously).
  const root = process.env[ROOT_ENV]
  if (root) writeFileSync(join(root, bootedMarker(process.pid)), '')
  let listenedAt = Number.POSITIVE_INFINITY
  const server: Server = buildServer(state, () => listenedAt)
  if (config.faults.has('never_listen') || process.env[STANDBY_ENV] === '1') {
    setInterval(() => {}, 1 << 30)
    return
  }
  server.on('error', (error: NodeJS.ErrnoException) => {
    process.stderr.write(`${logLine('api_server.py:1040', `cannot listen on ${config.host}:${config.port}: ${error.code ?? error.message}`).replace(/^INFO/, 'ERROR')}\n`)
    process.exit(1)
  })
  setTimeout(() => {
    server.listen(config.port, config.host, () => {
      listenedAt = Date.now()
      const address = server.address()
      out(startingLine(config.host, typeof address === 'object' && address ? address.port : config.port))
    })
  }, config.loadClosedMs)
}

main(process.argv.slice(2))
