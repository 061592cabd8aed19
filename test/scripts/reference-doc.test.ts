// The generated reference (scripts/reference-doc.ts) is the code's own text: each page equal to what
// the generator makes now, every command's page its --help, every option of every option table on
// its command's page, and every next step the source writes in docs/troubleshooting.md.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, test } from 'vitest'
import { OPTIONS, WRITEBACK_OPTIONS } from '../../helpers/config/options.ts'
import { STEP_IDS } from '../../helpers/config/step-ids.ts'
import { EFFECT_OPTIONS } from '../../helpers/effect/options.ts'
import { SERVE_OPTIONS } from '../../helpers/serve/options.ts'
import { nextSteps, nextStepsOf } from '../../scripts/next-steps.ts'
import { COMMANDS_DIR, areaOf, commands, exitText, referencePages, slug } from '../../scripts/reference-doc.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const read = (path: string): string => readFileSync(`${ROOT}${path}`, 'utf8')

describe('the generated pages', () => {
  let pages: Map<string, string>
  beforeAll(async () => {
    pages = await referencePages()
  })

  test('each is equal to the code (run pnpm faults-doc after changing a command, its options, a next step or serve metrics)', () => {
    expect(pages.size).toBeGreaterThan(8)
    for (const [path, text] of pages) expect(existsSync(`${ROOT}${path}`) ? read(path) : `(${path} is missing)`, path).toBe(text)
  })

  test('docs/reference/commands/ holds a page for each command armproof --help lists, and nothing else', () => {
    const generated = [...pages.keys()].filter((p) => p.startsWith(`${COMMANDS_DIR}/`)).sort()
    expect(
      readdirSync(`${ROOT}${COMMANDS_DIR}`)
        .map((f) => `${COMMANDS_DIR}/${f}`)
        .sort(),
    ).toEqual(generated)
    for (const name of ['verify', 'writeback', 'merge-reports', 'serve', 'effect', 'demo'])
      expect(generated).toContain(`${COMMANDS_DIR}/${name}.md`)
  })

  test("every option of every option table is on its command's page, with its env twin", () => {
    const tables = { verify: OPTIONS, writeback: WRITEBACK_OPTIONS, serve: SERVE_OPTIONS, effect: EFFECT_OPTIONS } as const
    for (const [name, options] of Object.entries(tables)) {
      const page = pages.get(`${COMMANDS_DIR}/${name}.md`)!
      for (const o of options as readonly { flag: string; env: string }[]) {
        expect(page, `${name} --${o.flag}`).toContain(`--${o.flag}`)
        expect(page, `${name} ${o.env}`).toContain(o.env)
      }
    }
  })
})

test("a command's page is its --help as the installed command prints it, and names commands as the installed tool does", async () => {
  const { usage, commands: cmds } = await commands()
  expect(usage).toMatch(/^armproof \d+\.\d+\.\d+: /)
  const verify = cmds.find((c) => c.name === 'verify')!
  expect(verify.help).toMatch(/^Usage: armproof verify --svc/m)
  expect(verify.help).not.toContain('node bin/')
  expect(read(`${COMMANDS_DIR}/verify.md`)).toContain(verify.help.trimEnd())
})

test('the exit codes are read from each --help: its Exit codes line, or its Exit sentence', () => {
  expect(exitText('Usage: x\n\nExit codes: 0 fine · 2 refused\n')).toBe('0 fine · 2 refused')
  expect(exitText('Merges them. Exit: the worst verdict, 2 when refused.')).toBe('the worst verdict, 2 when refused.')
  expect(exitText('Usage: x\n')).toBeUndefined()
  const page = read('docs/reference/exit-codes.md')
  for (const code of ['0', '1', '2', '3', '4', '5', '130', '143']) expect(page).toMatch(new RegExp(`(?:^|[| ·])${code}[ /]`, 'm'))
})

describe('the next steps, read from the source', () => {
  test('a string, a template with its placeholders, both branches, a table of functions and a switch; a next handed on adds nothing', () => {
    const found = nextStepsOf({
      'helpers/steps/argv/judge.ts': `
        const TABLE = { slow: (ctx) => \`raise --host-timeout above \${ctx.target.hostTimeoutMs / 1000}s\`, gone: () => 'start it' }
        function hint(kind) { switch (kind) { case 'a': return 'do a'; default: return \`do \${kind}\` } }
        export function judge(r, q, proof) {
          if (r) return { verdict: 'failed', observed: \`no \${q.flag} in argv\`, next: q.x ? \`set \${q.env} for \${command('verify')}\` : 'check the env' }
          if (q) return { verdict: 'inconclusive', next: TABLE[r.kind](r) }
          if (proof) return { next: proof.next, observed: 'x' }
          return { next: hint(r.kind) }
        }
        type T = { next: string }`,
    })
    expect(found.map((s) => [s.text, s.where, s.verdict, s.situation])).toEqual([
      ['set <env> for armproof verify', 'judge', 'failed', 'no <flag> in argv'],
      ['check the env', 'judge', 'failed', 'no <flag> in argv'],
      ['raise --host-timeout above <hostTimeoutMs>s', 'judge → TABLE.slow', 'inconclusive', 'case slow'],
      ['start it', 'judge → TABLE.gone', 'inconclusive', 'case gone'],
      ['do a', 'judge → hint · a', '', ''],
      ['do <kind>', 'judge → hint', '', ''],
    ])
  })

  test('every next step the source writes is on the troubleshooting page, under its step', () => {
    const page = read('docs/troubleshooting.md')
    const steps = nextSteps()
    expect(steps.length).toBeGreaterThan(150)
    for (const s of steps) expect(page, s.text).toContain(s.text.replaceAll('|', '\\|'))
    // Every proof step whose folder writes a next step has its section (a step added to the registry gets one).
    for (const id of STEP_IDS) if (steps.some((s) => areaOf(s.file) === id)) expect(page).toContain(`\n### Step ${id}\n`)
    expect(areaOf('helpers/steps/probes/tools.ts')).toBe('probe.tools')
    expect(areaOf('helpers/steps/meter/words.ts')).toBe('meter')
    expect(areaOf('helpers/writeback/vault.ts')).toBe('writeback')
  })
})

test("a heading's anchor is GitHub's", () => {
  expect(slug("The operator's mistakes")).toBe('the-operators-mistakes')
  expect(slug('Step probe.exact')).toBe('step-probeexact')
  expect(slug('Engines and their profiles (`--engine`, `--catalog`)')).toBe('engines-and-their-profiles---engine---catalog')
  expect(slug('llama.cpp')).toBe('llamacpp')
})
