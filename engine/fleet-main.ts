// A fleet of reference engines served by one process (`RADIANCE_REF_FLEET=N`, set by
// engine/fleet.ts): N engine states, each its own HTTP server on its own loopback port, behind one
// command line (the radiance flags every member was started with) and one boot ledger. For
// measuring armproof on hundreds of targets (scripts/perf/fleet.ts) where hundreds of engine
// processes would measure the machine instead: each member counts its own traffic and meters.
import { join } from 'node:path'
import type { Server } from 'node:http'
import { FLEET_ENV, ROOT_ENV } from './env.ts'
import type { Config } from './flags.ts'
import { bootOutput, startingLine } from './ledger.ts'
import { renameSync, writeFileSync } from './fs.ts'
import { markBooted, watchParent } from './parent.ts'
import { buildServer } from './server.ts'
import { createState } from './state.ts'

/** The file (in the launcher's root) the fleet writes its members' ports to, once all listen. */
export const FLEET_PORTS_FILE = 'fleet-ports.json'

export function runFleet(config: Config, echoed: readonly string[]): void {
  const size = Number(process.env[FLEET_ENV])
  const root = process.env[ROOT_ENV]
  if (!Number.isInteger(size) || size < 1 || !root) {
    process.stderr.write(`fleet: ${FLEET_ENV} must be a member count ≥ 1 and ${ROOT_ENV} the launcher's folder\n`)
    process.exit(2)
  }
  watchParent()
  for (const chunk of bootOutput(config, echoed)) process.stdout.write(chunk)
  markBooted()
  let listenedAt = Number.POSITIVE_INFINITY
  const servers: Server[] = Array.from({ length: size }, () => buildServer(createState(config), () => listenedAt))
  setTimeout(async () => {
    const ports = await Promise.all(
      servers.map(
        (server) =>
          new Promise<number>((resolve, reject) => {
            server.once('error', reject)
            server.listen(0, config.host, () => {
              const address = server.address()
              resolve(typeof address === 'object' && address ? address.port : 0)
            })
          }),
      ),
    )
    listenedAt = Date.now()
    process.stdout.write(`${startingLine(config.host, ports[0]!)}\n`)
    const file = join(root, FLEET_PORTS_FILE)
    writeFileSync(`${file}.tmp`, JSON.stringify(ports))
    renameSync(`${file}.tmp`, file)
  }, config.loadClosedMs)
}
