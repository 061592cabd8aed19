// The launcher's side of a fleet served by one process (engine/fleet-main.ts): startEngine({ fleet: N })
// starts it; this reads back the ports its members listen on, and names each member as the
// shims answer for it (`<svc>-<i>`).
import type { ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { FLEET_PORTS_FILE } from './fleet-main.ts'
import { alive } from './proc.ts'

export interface FleetMember {
  svc: string
  port: number
  baseUrl: string
}

/** The shell pattern the shims answer for: every member's service name. */
export const fleetSvcPattern = (svc: string): string => `${svc}-*`

/** Waits (at most `timeoutMs`) until every member listens; their names and ports, in order. */
export async function fleetMembers(
  child: ChildProcess,
  root: string,
  svc: string,
  size: number,
  timeoutMs = 60_000,
): Promise<FleetMember[]> {
  const file = join(root, FLEET_PORTS_FILE)
  const deadline = Date.now() + timeoutMs
  while (!existsSync(file)) {
    if (!alive(child))
      throw new Error(`fleet of ${size}: the engine process exited with ${child.exitCode ?? child.signalCode} before its members listened`)
    if (Date.now() > deadline) throw new Error(`fleet of ${size}: the members did not all listen within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 20))
  }
  const ports = JSON.parse(readFileSync(file, 'utf8')) as number[]
  if (ports.length !== size) throw new Error(`fleet of ${size}: ${ports.length} ports listed`)
  return ports.map((port, i) => ({ svc: `${svc}-${i}`, port, baseUrl: `http://127.0.0.1:${port}` }))
}
