// The survey's read of /proc/net/tcp{,6} (helpers/engine/survey.ts TCP_AWK): the very awk function
// the survey runs, on files written here (what it keeps, where it stops) and on this machine's own
// files while it holds connections (every listener still found: the kernel prints them first).
import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { connect, createServer, type Server, type Socket } from 'node:net'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, test } from 'vitest'
import { parseListeners } from '../../helpers/engine/proc.ts'
import { portHex, TCP_AWK } from '../../helpers/engine/survey.ts'
import { tempDir } from '../support/temp-dir.ts'

const run = promisify(execFile)
const dir = tempDir('armproof-survey-tcp-')

/** The lines `tcp(file)` keeps, and the inodes it marks as on a port asked (`ports`, as /proc prints them). */
async function kept(file: string, ports: readonly string[] = []): Promise<{ lines: string[]; asked: string[] }> {
  const harness = `${TCP_AWK}
BEGIN { tcp(file); for (j = 1; j <= nl; j++) print L[j]; printf "="; for (i in q) printf " %s", i; print "" }`
  const { stdout } = await run('awk', ['-v', `file=${file}`, '-v', `h= ${ports.map((p) => `${p} `).join('')}`, harness])
  const out = stdout.split('\n')
  const at = out.findIndex((l) => l.startsWith('='))
  return { lines: out.slice(0, at), asked: out[at]!.slice(1).trim().split(/\s+/).filter(Boolean).sort() }
}

const HEAD = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode'
/** A /proc/net/tcp line: slot, local address:port, state, inode. */
const line = (sl: number, local: string, st: string, inode: number): string =>
  `${String(sl).padStart(4)}: ${local} ${st === '0A' ? '00000000:0000' : '0100007F:9C40'} ${st} 00000000:00000000 00:00000000 00000000  1000        0 ${inode} 1 0000000000000000 100 0 0 10 0`

function file(name: string, lines: readonly string[]): string {
  const path = join(dir, name)
  writeFileSync(path, `${[HEAD, ...lines].join('\n')}\n`)
  return path
}

describe('what the survey keeps of a /proc/net/tcp file', () => {
  test('every listener of the listening table, and which of them are on a port asked', async () => {
    const path = file('listeners', [
      line(0, '0100007F:1F90', '0A', 101),
      line(1, '00000000:1F91', '0A', 102),
      line(2, '0100007F:0016', '0A', 103),
    ])
    const got = await kept(path, [portHex(8080)])
    expect(got.lines.map((l) => l.trim().split(/\s+/)[9])).toEqual(['101', '102', '103'])
    expect(got.asked).toEqual(['101'])
    expect(parseListeners(got.lines.join('\n')).map((l) => l.port)).toEqual([8080, 8081, 22])
  })

  test('stops at the first connection: what comes after it is not read (the kernel prints no listener there)', async () => {
    const path = file('connections', [
      line(0, '0100007F:1F90', '0A', 201),
      line(1, '0100007F:9C40', '01', 202),
      // Never printed by a kernel; here only to show the read ended at the line above.
      line(2, '0100007F:1F92', '0A', 203),
    ])
    expect((await kept(path, [portHex(8082)])).lines.map((l) => l.trim().split(/\s+/)[9])).toEqual(['201'])
  })

  test('a pending request (03, printed after its listener before Linux 4.4) and a line that does not parse do not stop it', async () => {
    const path = file('requests', [
      line(0, '0100007F:1F90', '0A', 301),
      line(1, '0100007F:1F90', '03', 0),
      'garbage',
      line(2, '0100007F:1F93', '0A', 302),
      line(3, '0100007F:9C40', '06', 0),
    ])
    expect((await kept(path)).lines.map((l) => l.trim().split(/\s+/)[9])).toEqual(['301', '302'])
  })

  test('an empty table and a missing file keep nothing', async () => {
    expect((await kept(file('empty', []))).lines).toEqual([])
    expect((await kept(join(dir, 'absent'))).lines).toEqual([])
  })
})

describe("this machine's /proc/net/tcp, read as the survey reads it", () => {
  const servers: Server[] = []
  const sockets: Socket[] = []
  afterAll(async () => {
    for (const s of sockets) s.destroy()
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))))
  })

  test('finds each listener while the host holds connections (established after them in the file)', async () => {
    for (let i = 0; i < 3; i++) {
      const server = createServer((s) => sockets.push(s))
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
      servers.push(server)
    }
    const ports = servers.map((s) => (s.address() as { port: number }).port)
    for (const port of ports)
      for (let i = 0; i < 10; i++) {
        const c = connect(port, '127.0.0.1')
        sockets.push(c)
        await new Promise((r) => c.once('connect', r))
      }
    const { stdout } = await run('cat', ['/proc/net/tcp'])
    expect(stdout.split('\n').filter((l) => l.trim().split(/\s+/)[3] === '01').length).toBeGreaterThanOrEqual(60)
    const got = await kept('/proc/net/tcp', ports.map(portHex))
    const found = parseListeners(got.lines.join('\n'))
    // The listeners this test opened that the read missed (none), with what it did find.
    const missed = ports.filter((p) => !found.some((l) => l.port === p && l.address === '127.0.0.1'))
    expect(missed, `kept: ${found.map((l) => `${l.address}:${l.port}`).join(' ')}`).toEqual([])
    expect(got.asked.length).toBe(3)
  })
})
