// A real llama-server for test/real/: the binary scripts/real/llama-server.sh built, serving the
// tiny random-weight model of scripts/real/tiny-gguf.ts on a free loopback port, its whole log
// (stdout and stderr) in a file, as journald or `docker logs` would keep it. Started in a temp
// folder holding the model, so the model is named by its file name; stopped with SIGTERM.
import { type ChildProcess, spawn } from 'node:child_process'
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { freePort } from '../../scripts/real/capture-llama.ts'
import { tinyGguf } from '../../scripts/real/tiny-gguf.ts'
import { llamaServerPath } from './prerequisites.ts'
import { tempDir } from './temp-dir.ts'

export interface RealLlama {
  bin: string
  port: number
  baseUrl: string
  pid: number
  dir: string
  /** The file holding its log. */
  logFile: string
  log(): string
  child: ChildProcess
  stop(): Promise<void>
}

let model: Buffer | undefined

/** Starts llama-server with `args` (host and port appended) and `env`; returns at once (it may still load). */
export async function startLlama(args: readonly string[], env: Record<string, string> = {}): Promise<RealLlama> {
  const bin = llamaServerPath()
  const dir = tempDir('armproof-llama-')
  model ??= tinyGguf()
  writeFileSync(join(dir, 'tiny.gguf'), model)
  const logFile = join(dir, 'server.log')
  const port = await freePort()
  const fd = openSync(logFile, 'a')
  // One compute thread: ggml's workers spin while they wait for work, and on 2 cores shared with the
  // rest of the suite they burned most of the CPU this file cost (measured beside two busy loops:
  // 59 CPU-s and 83 s for test/real/llama-server.test.ts at the default thread count, 7 CPU-s and
  // 30 s with one). A tiny model needs no more; no test reads the thread count.
  const child = spawn(bin, ['-m', 'tiny.gguf', '--threads', '1', ...args, '--host', '127.0.0.1', '--port', String(port)], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', fd, fd],
  })
  closeSync(fd)
  const exited = new Promise<void>((done) => child.once('exit', () => done()))
  return {
    bin,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    dir,
    logFile,
    log: () => readFileSync(logFile, 'utf8'),
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(timer)
    },
  }
}

/** Until /health answers `status` (200: loaded; 503: listening and loading), within `budgetMs`. */
export async function healthIs(server: RealLlama, status: number, budgetMs = 30_000): Promise<void> {
  const until = Date.now() + budgetMs
  while (Date.now() < until) {
    if (server.child.exitCode !== null) throw new Error(`llama-server exited ${server.child.exitCode}:\n${server.log()}`)
    try {
      const res = await fetch(`${server.baseUrl}/health`, { signal: AbortSignal.timeout(2000) })
      await res.arrayBuffer()
      if (res.status === status) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 20))
  }
  throw new Error(`llama-server's /health never answered ${status} in ${budgetMs} ms:\n${server.log()}`)
}
