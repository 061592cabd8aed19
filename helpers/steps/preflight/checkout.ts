// Check `preflight.checkout`: the folder deploy.sh runs from is a git checkout on branch `main`,
// and `git status --porcelain --untracked-files=all` prints nothing (no change, no untracked
// file). git runs through the host seam (a local host: the checkout is on this machine), the
// folder quoted into its one script.
import { quote } from '../../config/shell.ts'
import type { HostClient, HostRun } from '../../seams/host.ts'
import { tail } from '../_host.ts'
import type { PreflightJudgement } from './registry.ts'

/** The branch the deploy must run from. */
export const DEPLOY_BRANCH = 'main'

/** Exit codes of the script below. */
const NO_FOLDER = 90
const NOT_A_CHECKOUT = 91
const STATUS_FAILED = 92
const NO_GIT = 93

const STATUS_MARK = '@@armproof-status'

/** The read of the checkout: where it is, its HEAD and branch, then its status. */
export function checkoutRead(dir: string, timeoutMs: number): HostRun {
  const script = [
    `cd -- ${quote(dir)} || exit ${NO_FOLDER}`,
    `command -v git >/dev/null 2>&1 || exit ${NO_GIT}`,
    `top=$(git rev-parse --show-toplevel) || exit ${NOT_A_CHECKOUT}`,
    `printf 'top %s\\n' "$top"`,
    `printf 'head %s\\n' "$(git rev-parse --short HEAD 2>/dev/null)"`,
    `printf 'branch %s\\n' "$(git symbolic-ref --short -q HEAD)"`,
    `echo ${STATUS_MARK}`,
    `git status --porcelain --untracked-files=all || exit ${STATUS_FAILED}`,
  ].join('\n')
  return { script, timeoutMs }
}

/** What the command line says it runs (one line, for `where`). */
export function checkoutCommand(dir: string): string {
  return `cd ${quote(dir)} && git symbolic-ref --short HEAD && git status --porcelain --untracked-files=all`
}

/** The status lines shown in `observed`, at most this many. */
const SHOWN = 10

export async function judgeCheckout(host: HostClient, dir: string, timeoutMs: number): Promise<PreflightJudgement> {
  const expected = `${dir} is a git checkout on branch ${DEPLOY_BRANCH} with no change and no untracked file`
  const where = `${host.where}: ${checkoutCommand(dir)}`
  const r = await host.run(checkoutRead(dir, timeoutMs))
  const said = tail(r.stderr || r.stdout)
  if (r.failure)
    return {
      verdict: 'inconclusive',
      expected,
      observed: `could not run git (${r.failure})${said ? `: ${said}` : ''}`,
      where,
      next: `run git status in ${dir} by hand`,
      evidence: { exitCode: r.exitCode, stderr: r.stderr.slice(-2000) },
    }
  if (r.exitCode === NO_GIT)
    return {
      verdict: 'inconclusive',
      expected,
      observed: 'git is not installed on this machine (command -v git found nothing)',
      where,
      next: 'install git, or run preflight where the deploy checkout and git are',
      evidence: { exitCode: r.exitCode },
    }
  if (r.exitCode === NO_FOLDER)
    return {
      verdict: 'failed',
      expected,
      observed: `cannot enter ${dir}${said ? `: ${said}` : ''}`,
      where,
      next: 'give --checkout the folder deploy.sh runs from',
      evidence: { exitCode: r.exitCode, stderr: r.stderr.slice(-2000) },
    }
  if (r.exitCode === NOT_A_CHECKOUT) {
    // git refuses a folder another user owns ("dubious ownership"): it cannot say, the folder may well be fine.
    const refused = /dubious ownership|safe\.directory/i.test(r.stderr)
    return {
      verdict: refused ? 'inconclusive' : 'failed',
      expected,
      observed: refused ? `git refuses the folder: ${said}` : `${dir} is not a git checkout: ${said || 'git rev-parse failed'}`,
      where,
      next: refused
        ? `run preflight as the user who owns ${dir} (the one deploy.sh runs as), or mark it safe: git config --global --add safe.directory ${quote(dir)}`
        : `do not deploy from here: give --checkout the dev checkout deploy.sh runs from (a clone of the repository, on ${DEPLOY_BRANCH})`,
      evidence: { exitCode: r.exitCode, stderr: r.stderr.slice(-2000) },
    }
  }
  const [head, status = ''] = r.stdout.split(`${STATUS_MARK}\n`)
  const field = (name: string) =>
    (head ?? '')
      .split('\n')
      .find((l) => l.startsWith(`${name} `))
      ?.slice(name.length + 1) ?? ''
  const top = field('top')
  const commit = field('head')
  const branch = field('branch')
  if (r.exitCode !== 0 || head === undefined || !r.stdout.includes(STATUS_MARK))
    return {
      verdict: 'inconclusive',
      expected,
      observed: `git status exited ${r.exitCode}${said ? `: ${said}` : ''}`,
      where,
      next: `run git status in ${dir} by hand, and fix what it says`,
      evidence: { exitCode: r.exitCode, stderr: r.stderr.slice(-2000), top },
    }
  const entries = status.split('\n').filter((l) => l.length > 0)
  const untracked = entries.filter((l) => l.startsWith('?? '))
  const changed = entries.filter((l) => !l.startsWith('?? '))
  const evidence = { top, head: commit || null, branch: branch || null, changed, untracked }
  const wrong: string[] = []
  const next: string[] = []
  if (branch !== DEPLOY_BRANCH) {
    wrong.push(branch ? `on branch ${branch}` : `HEAD is detached${commit ? ` at ${commit}` : ''}`)
    next.push(
      `switch the checkout to ${DEPLOY_BRANCH} (git switch ${DEPLOY_BRANCH}, then git pull): deploy.sh runs from ${DEPLOY_BRANCH} literally`,
    )
  }
  if (entries.length > 0) {
    const shown = entries.slice(0, SHOWN).join(', ')
    wrong.push(
      `${changed.length} changed and ${untracked.length} untracked file${untracked.length === 1 ? '' : 's'}: ${shown}${entries.length > SHOWN ? `, … (${entries.length - SHOWN} more)` : ''}`,
    )
    next.push(
      `commit or remove ${entries.length === 1 ? 'it' : 'them'} (git stash -u stashes untracked files too): the deploy ships the folder as it is, not ${DEPLOY_BRANCH}`,
    )
  }
  if (wrong.length > 0)
    return {
      verdict: 'failed',
      expected,
      observed: `${top}: ${wrong.join('; ')}`,
      where,
      next: `do not deploy: ${next.join('; ')}`,
      evidence,
    }
  return {
    verdict: 'passed',
    expected,
    observed: `${top}: on ${DEPLOY_BRANCH}${commit ? ` at ${commit}` : ''}, git status --porcelain --untracked-files=all prints nothing`,
    where,
    evidence,
  }
}
