// The demo's deploy checkout: a git repository on branch main in a folder of the engine's temp
// root (removed with it), its files committed, nothing else in it: what `preflight --checkout`
// reads before the demo's "deploy". Its own author, no user or system git configuration read.
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'armproof demo',
  GIT_AUTHOR_EMAIL: 'demo@armproof.invalid',
  GIT_COMMITTER_NAME: 'armproof demo',
  GIT_COMMITTER_EMAIL: 'demo@armproof.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
}

/** `<root>/checkout` holding `files`, committed on main; or why it could not be made (git missing). */
export function demoCheckout(root: string, files: Readonly<Record<string, string>>): { dir: string } | { problem: string } {
  const dir = join(root, 'checkout')
  const git = (...args: string[]) => execFileSync('git', ['-C', dir, ...args], { env: { ...process.env, ...GIT_ENV }, stdio: 'pipe' })
  try {
    mkdirSync(dir)
    git('init', '-q', '-b', 'main')
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true })
      writeFileSync(join(dir, path), text)
    }
    git('add', '-A')
    git('commit', '-q', '-m', 'the deploy')
    return { dir }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return {
      problem:
        code === 'ENOENT'
          ? 'git is not installed (the demo makes its deploy checkout with it)'
          : `could not make the demo's deploy checkout: ${(error as Error).message.split('\n')[0]}`,
    }
  }
}
