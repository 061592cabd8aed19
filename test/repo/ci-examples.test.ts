// The CI examples under examples/ci/ pass real linters from the npm registry: GitHub workflows
// @action-validator/core (action-validator, compiled to WebAssembly, SchemaStore's workflow
// schema inside), GitLab pipelines gitlab-ci-local (GitLab's CI JSON schema inside, the jobs as
// GitLab would list them). And they fail when the arm fails: no allow_failure or
// continue-on-error on a verify, the packed tool or the image rather than a checkout of armproof,
// the JUnit published to the platform's test report.
import { execFile } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { validateWorkflow } from '@action-validator/core'
import { describe, expect, test } from 'vitest'
import { parse } from 'yaml'
import { ROOT } from '../support/run-verify.ts'
import { tempDir } from '../support/temp-dir.ts'

const run = promisify(execFile)
const text = (file: string): string => readFileSync(join(ROOT, 'examples/ci', file), 'utf8')
const GITLAB_CI_LOCAL = join(ROOT, 'node_modules/gitlab-ci-local/dist/index.js')

/** gitlab-ci-local's view of a pipeline file, in a throwaway git repository as it wants one. */
async function gitlabJobs(
  yamlText: string,
): Promise<{ ok: true; jobs: Array<{ name: string; stage: string; when: string; allow_failure: unknown }> } | { ok: false; out: string }> {
  const dir = tempDir('armproof-gitlab-')
  writeFileSync(join(dir, '.gitlab-ci.yml'), yamlText)
  const git = (...args: string[]) => run('git', ['-C', dir, '-c', 'user.name=armproof', '-c', 'user.email=armproof@localhost', ...args])
  await git('init', '-q')
  await git('commit', '-q', '--allow-empty', '-m', 'pipeline')
  await git('remote', 'add', 'origin', 'https://gitlab.example.invalid/infra/deploy.git')
  await git('update-ref', 'refs/remotes/origin/main', 'HEAD')
  await git('symbolic-ref', 'refs/remotes/origin/HEAD', 'refs/remotes/origin/main')
  try {
    const { stdout } = await run(process.execPath, [GITLAB_CI_LOCAL, '--list-json'], { cwd: dir, timeout: 30_000 })
    return { ok: true, jobs: JSON.parse(stdout.slice(stdout.indexOf('['))) }
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string }
    return { ok: false, out: `${e.stdout ?? ''}${e.stderr ?? ''}` }
  }
}

type Step = { name?: string; uses?: string; run?: string; if?: string; 'continue-on-error'?: unknown; with?: Record<string, unknown> }
type Workflow = { jobs: Record<string, { steps: Step[]; 'continue-on-error'?: unknown }> }

describe('GitHub Actions (action-validator)', () => {
  test.each(['github-actions.yml', 'github-actions-fleet.yml'])('%s passes action-validator', (file) => {
    expect(validateWorkflow(text(file)).errors).toEqual([])
  })

  test('action-validator fails a broken workflow (it is not a linter that passes everything)', () => {
    const broken = text('github-actions.yml').replace('runs-on: [self-hosted, gpu-ops]', 'run-on: [self-hosted, gpu-ops]')
    expect(validateWorkflow(broken).errors.length).toBeGreaterThan(0)
  })

  test.each(['github-actions.yml', 'github-actions-fleet.yml'])(
    '%s: the packed tool, no continue-on-error on verify, JUnit published to a check run',
    (file) => {
      const wf = parse(text(file)) as Workflow
      const steps = wf.jobs.verify!.steps
      const verify = steps.find((s) => s.run?.includes('armproof verify'))!
      expect(verify).toBeDefined()
      expect(verify['continue-on-error']).toBeUndefined()
      expect(wf.jobs.verify!['continue-on-error']).toBeUndefined()
      const all = Object.values(wf.jobs).flatMap((j) => j.steps)
      expect(all.filter((s) => /\bpnpm (install|verify|writeback|merge-reports)\b/.test(s.run ?? '')).map((s) => s.name)).toEqual([])
      expect(all.filter((s) => s.uses?.startsWith('pnpm/'))).toEqual([])
      expect(steps.some((s) => s.run?.includes('npm install --global') && s.run.includes('"$ARMPROOF_PACKAGE"'))).toBe(true)
      const junit = steps.find((s) => s.uses?.startsWith('mikepenz/action-junit-report@'))!
      expect([junit.if, String(junit.with?.report_paths)]).toEqual(['always()', expect.stringMatching(/^reports\/.*\.xml$/)])
    },
  )
})

describe('GitLab CI (gitlab-ci-local)', () => {
  test.each(['gitlab-ci.yml', 'gitlab-ci-fleet.yml'])(
    "%s passes GitLab's schema; no verify job may fail without failing the pipeline",
    async (file) => {
      const listed = await gitlabJobs(text(file))
      expect(listed.ok ? '' : listed.out).toBe('')
      if (!listed.ok) return
      const verify = listed.jobs.filter((j) => j.stage === 'verify')
      expect(verify.length).toBeGreaterThan(0)
      for (const j of verify) expect([j.name, j.allow_failure, j.when]).toEqual([j.name, false, 'on_success'])
      const after = listed.jobs.filter((j) => j.stage !== 'verify')
      expect(after.map((j) => j.when)).toEqual(['always'])
      const doc = parse(text(file)) as Record<string, { image?: unknown; script?: string[]; artifacts?: { reports?: { junit?: string } } }>
      expect(doc.verify!.image).toEqual({ name: '$ARMPROOF_IMAGE', entrypoint: [''] })
      expect(doc.verify!.artifacts?.reports?.junit).toBe('reports/*.xml')
      expect(JSON.stringify(doc)).not.toMatch(/pnpm (install|verify|writeback|merge-reports)/)
    },
  )

  test('gitlab-ci-local refuses a pipeline GitLab would refuse (a misspelt key), and lists allow_failure where it is set', async () => {
    const misspelt = await gitlabJobs(
      text('gitlab-ci.yml').replace(
        '  artifacts:\n    when: always\n    paths: [reports/]',
        '  artifact:\n    when: always\n    paths: [reports/]',
      ),
    )
    expect(misspelt.ok ? 'listed' : misspelt.out).toContain("'artifact' property is not expected to be here")
    const lenient = await gitlabJobs(
      text('gitlab-ci.yml').replace(
        '  artifacts:\n    when: always\n    paths: [reports/]',
        '  allow_failure:\n    exit_codes: [1, 3]\n  artifacts:\n    when: always\n    paths: [reports/]',
      ),
    )
    expect(lenient.ok && lenient.jobs.filter((j) => j.stage === 'verify').map((j) => j.allow_failure)).toEqual([
      { exit_codes: [1, 3] },
      { exit_codes: [1, 3] },
    ])
  })
})
