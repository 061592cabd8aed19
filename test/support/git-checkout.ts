// A throwaway git checkout for preflight's tests (in a tempDir, removed after the file): on a
// branch, its files committed, then whatever a test changes in it.
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { tempDir } from './temp-dir.ts'

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'armproof test',
  GIT_AUTHOR_EMAIL: 'test@armproof.invalid',
  GIT_COMMITTER_NAME: 'armproof test',
  GIT_COMMITTER_EMAIL: 'test@armproof.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
}

export function git(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-C', dir, ...args], { env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' })
}

/** A checkout on `branch` (default main) with `files` committed. */
export function gitCheckout(files: Readonly<Record<string, string>>, branch = 'main'): string {
  const dir = tempDir('armproof-checkout-')
  git(dir, 'init', '-q', '-b', branch)
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  git(dir, 'add', '-A')
  git(dir, 'commit', '-q', '--allow-empty', '-m', 'the deploy')
  return dir
}
