// What a test file needs from the machine beyond Node and node_modules, said once, checked once.
// Outside CI a missing prerequisite skips the file's tests, each reported as not run with the
// reason and exactly what to install (vitest prints the note; test/support/closing-line.ts sums
// them up at the end). Under CI=true a missing prerequisite fails every one of those tests with
// the same message: CI must install it (.ci/run does).
import { execFileSync } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import { delimiter, join } from 'node:path'
import { beforeEach, test } from 'vitest'

export interface Prerequisite {
  /** What is needed, in a few words. */
  name: string
  /** What to do about it when missing: the Debian package, or how to run. */
  install: string
  /** Undefined when present, else what was found instead. */
  check(): string | undefined
}

function onPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue
    try {
      accessSync(join(dir, command), constants.X_OK)
      return join(dir, command)
    } catch {
      // not in this folder
    }
  }
  return undefined
}

const executable = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** /usr/sbin/sshd: the ssh tests start their own on 127.0.0.1 (test/support/sshd.ts). */
export const SSHD: Prerequisite = {
  name: 'sshd (/usr/sbin/sshd)',
  install: 'apt-get install openssh-server',
  check: () => (executable('/usr/sbin/sshd') ? undefined : '/usr/sbin/sshd is missing'),
}

/** The ssh client and ssh-keygen. */
export const SSH_CLIENT: Prerequisite = {
  name: 'ssh and ssh-keygen',
  install: 'apt-get install openssh-client',
  check: () => {
    const missing = ['ssh', 'ssh-keygen'].filter((c) => !onPath(c))
    return missing.length ? `${missing.join(' and ')} not on PATH` : undefined
  },
}

/** sudo, usable without a password (`sudo -n true` succeeds: root, or a NOPASSWD rule). */
export const SUDO: Prerequisite = {
  name: 'sudo without a password',
  install: 'apt-get install sudo (and run as root, or with a NOPASSWD sudoers rule)',
  check: () => {
    if (!onPath('sudo')) return 'sudo not on PATH'
    try {
      execFileSync('sudo', ['-n', 'true'], { stdio: 'pipe', timeout: 5000 })
      return undefined
    } catch (error) {
      const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim()
      return `sudo -n true failed${stderr ? `: ${stderr.split('\n')[0]}` : ''}`
    }
  },
}

/** Prometheus' own server and promtool, for tests that hold armproof to Prometheus' behaviour. */
export const PROMETHEUS: Prerequisite = {
  name: 'prometheus and promtool',
  install: 'apt-get install prometheus',
  check: () => {
    const missing = ['prometheus', 'promtool'].filter((c) => !onPath(c))
    return missing.length ? `${missing.join(' and ')} not on PATH` : undefined
  },
}

/**
 * The real llama-server of test/real/, built from the llama.cpp source node-llama-cpp ships and
 * cached outside the work tree by scripts/real/llama-server.sh (its --path says where).
 */
export const LLAMA_SERVER: Prerequisite = {
  name: 'a real llama-server (built by scripts/real/llama-server.sh)',
  install:
    'sh scripts/real/llama-server.sh (needs cmake, g++ and git: apt-get install cmake g++ git; about 10 minutes on 2 cores, once a machine)',
  check: () => (executable(llamaServerPath()) ? undefined : `${llamaServerPath()} is missing`),
}

/** Where scripts/real/llama-server.sh keeps the binary: its own --path, so the two cannot drift. */
let llamaPath: string | undefined
export function llamaServerPath(): string {
  llamaPath ??= execFileSync('sh', [new URL('../../scripts/real/llama-server.sh', import.meta.url).pathname, '--path'], {
    encoding: 'utf8',
  }).trim()
  return llamaPath
}

/** Root: sshd switches to the logged-in user; the tests add and remove a throwaway user. */
export const ROOT_USER: Prerequisite = {
  name: 'root',
  install: 'run the tests as root (as CI does)',
  check: () => (process.getuid?.() === 0 ? undefined : `running as uid ${process.getuid?.() ?? '?'}`),
}

export interface Needs {
  /** Empty when everything is there. */
  missing: readonly { prerequisite: Prerequisite; found: string }[]
  /** One line: what is missing, what was found, what to install. */
  reason: string
}

/** Checks the prerequisites now (once per file). */
export function check(...prerequisites: readonly Prerequisite[]): Needs {
  const missing = prerequisites.flatMap((p) => {
    const found = p.check()
    return found === undefined ? [] : [{ prerequisite: p, found }]
  })
  const reason = missing.length
    ? `needs ${missing.map((m) => `${m.prerequisite.name} (${m.found})`).join(', ')}; to run these tests: ${[...new Set(missing.map((m) => m.prerequisite.install))].join('; ')}`
    : ''
  return { missing, reason }
}

export const isCi = (env: NodeJS.ProcessEnv = process.env): boolean => env.CI === 'true' || env.CI === '1'

/**
 * Registers, in the current file or describe block, the hooks that enforce `needs`: outside CI
 * every test is skipped with the reason; under CI every test fails with it. Returns true when the
 * prerequisites are there, so the block's own beforeAll can start nothing otherwise.
 */
export function requires(needs: Needs): boolean {
  if (needs.missing.length === 0) return true
  if (isCi()) {
    // beforeEach, not beforeAll: each test fails by name (a failed beforeAll leaves them "skipped").
    beforeEach(() => {
      throw new Error(`CI=true and a prerequisite is missing: ${needs.reason}`)
    })
  } else {
    beforeEach((ctx) => {
      ctx.skip(`not run: ${needs.reason}`)
    })
  }
  return false
}

/**
 * `test`, for the few tests of a file that need `needs` (the others run anyway): same rules as
 * requires(), through an automatic fixture, so a call site changes only `test` to the result.
 */
export function testRequiring(needs: Needs) {
  // biome-ignore lint/suspicious/noConfusingVoidType: vitest's type for a fixture that provides nothing (use())
  return test.extend<{ prerequisites: void }>({
    prerequisites: [
      async ({ skip }, use) => {
        if (needs.missing.length > 0) {
          if (isCi()) throw new Error(`CI=true and a prerequisite is missing: ${needs.reason}`)
          skip(`not run: ${needs.reason}`)
        }
        await use()
      },
      { auto: true },
    ],
  })
}
