// Bad input to the CLI and to .env: a generated set of hostile and malformed values for every
// option. Each is refused with one clear line per problem, before anything runs.
import { describe, expect, test } from 'vitest'
import { loadConfig } from '../../helpers/config/load.ts'
import { OPTIONS } from '../../helpers/config/options.ts'

const BASE: Record<string, string> = { svc: 'demo', knob: 'PREFILL_INTERLEAVE', 'base-url': 'http://127.0.0.1:8000' }

/** Values no option accepts. */
const EVERYWHERE = {
  newline: 'demo\nrm -rf /',
  'carriage return': 'demo\rx',
  'NUL byte': 'demo\0x',
  'very long': 'x'.repeat(10_000),
}

/** Values refused by every option that ends up in a shell command, a URL or a name. */
const SHELL_BOUND = {
  semicolon: 'a;reboot',
  'command substitution': '$(touch /tmp/armproof-pwned)',
  backticks: '`id`',
  pipe: 'a|b',
  'single quote': "a'b",
  'double quote': 'a"b',
  space: 'a b',
  unicode: 'rädiance',
  'right-to-left override': 'a\u202eb',
  'leading dash': '-oProxyCommand=sh',
  glob: 'a*',
}

const SHELL_BOUND_FLAGS = [
  'svc',
  'knob',
  'value',
  'previous',
  'host',
  'process',
  'deploy-user',
  'unit',
  'model',
  'mode',
  'health-budget',
  'meter-window',
  'probe-timeout',
  'host-timeout',
  'base-url',
  'api-key',
]
const stringFlags = OPTIONS.filter((o) => o.kind === 'string').map((o) => o.flag)

function args(flag: string, value: string): string[] {
  const all = { ...BASE, [flag]: value }
  return Object.entries(all).flatMap(([k, v]) => [`--${k}`, v])
}

function expectOneLineRefusal(result: ReturnType<typeof loadConfig>, flag: string, env?: string): void {
  expect(result.ok).toBe(false)
  if (result.ok) return
  expect(result.problems).toHaveLength(1)
  const line = result.problems[0]!.message
  expect(line).not.toMatch(/[\r\n\0]/)
  expect(line.length).toBeLessThan(400)
  expect(line).toContain(env ?? `--${flag}`)
}

describe('every option refuses values no option may hold', () => {
  const cases = stringFlags.flatMap((flag) => Object.entries(EVERYWHERE).map(([kind, value]) => ({ flag, kind, value })))
  test.each(cases)('--$flag with a $kind is refused in one line', ({ flag, value }) => {
    expectOneLineRefusal(loadConfig({ argv: args(flag, value), env: {} }), flag)
  })
  // A NUL cannot travel through a double-quoted .env value (JSON's \u0000 stays six plain characters);
  // it reaches the config only as a flag's value, above. Every other value must be refused from .env too.
  const dotenvCases = cases.filter(({ value }) => !value.includes('\0'))
  test.each(dotenvCases)('$flag in .env with a $kind is refused in one line', ({ flag, value }) => {
    const env = OPTIONS.find((o) => o.flag === flag)!.env
    const dotenv = Object.entries({
      VERIFY_SVC: 'demo',
      VERIFY_KNOB: 'PREFILL_INTERLEAVE',
      VERIFY_BASE_URL: 'http://127.0.0.1:8000',
      [env]: value,
    })
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join('\n')
    expectOneLineRefusal(loadConfig({ dotenv, env: {} }), flag, `${env} in .env`)
  })
})

describe('options that reach a shell, a URL or a name refuse metacharacters and strangers', () => {
  // --value/--previous of an int knob refuse everything non-numeric; --model allows unicode and
  // quotes in ids (it travels only in a JSON body), so it refuses only whitespace.
  const all = SHELL_BOUND_FLAGS.flatMap((flag) => Object.entries(SHELL_BOUND).map(([kind, value]) => ({ flag, kind, value })))
  const modelId = ({ flag, value }: { flag: string; value: string }): boolean => flag === 'model' && !/\s/.test(value)
  test.each(all.filter((c) => !modelId(c)))('--$flag with a $kind is refused', ({ flag, value }) => {
    expectOneLineRefusal(loadConfig({ argv: args(flag, value), env: {} }), flag)
  })
  test.each(all.filter(modelId))('--$flag with a $kind is taken as a model id, as written', ({ value }) => {
    const result = loadConfig({ argv: args('model', value), env: {} })
    expect(result.ok && result.target.model).toBe(value)
  })
})

describe('the API key is never echoed back', () => {
  test.each(Object.entries(EVERYWHERE))('an API key with a %s is refused without showing it', (_kind, value) => {
    const result = loadConfig({ argv: args('api-key', `sk-secret-${value}`), env: {} })
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.problems.map((p) => p.message).join('\n')).not.toContain('sk-secret')
  })
})

describe("under --runtime kubernetes, the pod and kubectl's options refuse metacharacters and strangers", () => {
  const kube = (flag: string, value: string) => loadConfig({ argv: [...args(flag, value), '--runtime', 'kubernetes'], env: {} })
  test.each(Object.entries(SHELL_BOUND))('--host with a %s is refused as no pod name', (_kind, value) => {
    expectOneLineRefusal(kube('host', value), 'host')
  })
  test.each(Object.entries(SHELL_BOUND))('--kube-opts with a %s is refused, each problem one line', (_kind, value) => {
    const result = kube('kube-opts', value)
    expect(result.ok).toBe(false)
    if (result.ok) return
    for (const p of result.problems) {
      expect(p.message).toMatch(/^--kube-opts: /)
      expect(p.message).not.toMatch(/[\r\n\0]/)
    }
  })
  test.each(['--runtime', '--skip'])('%s with a hostile value is refused in one line', (flag) => {
    for (const value of Object.values(SHELL_BOUND))
      expectOneLineRefusal(loadConfig({ argv: args(flag.slice(2), value), env: {} }), flag.slice(2))
  })
})
