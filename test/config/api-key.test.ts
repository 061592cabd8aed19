// Where the API key may come from: VERIFY_API_KEY (env or .env) or a file (--api-key-file /
// VERIFY_API_KEY_FILE). A key on the command line is refused before anything is contacted, in
// one line that names the two safe ways and never shows the key.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { keyFromFileText, loadConfig } from '../../helpers/config/load.ts'
import { API_KEY_FLAG_REFUSED, helpText } from '../../helpers/config/options.ts'

const KEY = 'sk-armproof-cfg-4c3b2a19'
const base = ['--svc', 'demo', '--knob', 'PREFILL_INTERLEAVE', '--base-url', 'http://127.0.0.1:8000']
const dir = mkdtempSync(join(tmpdir(), 'armproof-key-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function keyFile(name: string, text: string, mode = 0o600): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  chmodSync(path, mode)
  return path
}

function load(argv: string[], env: Record<string, string> = {}, dotenv?: string) {
  return loadConfig({ argv: [...base, ...argv], env, cwd: dir, ...(dotenv ? { dotenv } : {}) })
}

function messages(r: ReturnType<typeof loadConfig>): string {
  return r.ok ? '' : r.problems.map((p) => p.message).join('\n')
}

describe('a key on the command line is refused', () => {
  test.each([
    ['--api-key KEY', ['--api-key', KEY]],
    ['--api-key=KEY', [`--api-key=${KEY}`]],
    ['--api-key with no value', ['--api-key']],
    ['--api-key KEY beside a good key file', ['--api-key', KEY, '--api-key-file', 'k']],
  ])('%s: one line naming the two safe ways, the key not shown', (_name, argv) => {
    const r = load(argv)
    expect(r.ok).toBe(false)
    const text = messages(r)
    expect(text).toContain(API_KEY_FLAG_REFUSED)
    expect(text).toContain('VERIFY_API_KEY (env or .env)')
    expect(text).toContain('--api-key-file PATH')
    expect(text).not.toContain(KEY)
  })

  test('the value after an unknown option (a misspelt key flag) is never echoed as a stray argument', () => {
    const text = messages(load(['--api-token', KEY, '--token', KEY]))
    expect(text).toContain('unknown option "--api-token" (its value is not shown)')
    expect(text).not.toContain(KEY)
  })

  test('the key given to --api-key-file by mistake is not echoed back as a missing path', () => {
    const text = messages(load(['--api-key-file', KEY.replaceAll('-', '_')]))
    expect(text).toBe(
      '--api-key-file: the value given (not shown: it does not look like a path; is it the key itself?) cannot be read (no such file)',
    )
  })

  test('--help shows only the safe ways', () => {
    const help = helpText(['PREFILL_INTERLEAVE'])
    expect(help).toContain('--api-key-file <path>')
    expect(help).toContain('VERIFY_API_KEY')
    expect(help).not.toMatch(/--api-key <|--api-key=/)
  })
})

describe('the key from env or a file', () => {
  test('VERIFY_API_KEY from env, and from .env', () => {
    const fromEnv = load([], { VERIFY_API_KEY: KEY })
    expect(fromEnv.ok && fromEnv.target.apiKey).toBe(KEY)
    const fromDotenv = load([], {}, `VERIFY_API_KEY=${KEY}\n`)
    expect(fromDotenv.ok && fromDotenv.target.apiKey).toBe(KEY)
  })

  test('--api-key-file and VERIFY_API_KEY_FILE read the key, dropping one trailing newline', () => {
    const path = keyFile('key', `${KEY}\n`)
    const flag = load(['--api-key-file', path])
    expect(flag.ok && flag.target.apiKey).toBe(KEY)
    const env = load([], { VERIFY_API_KEY_FILE: 'key' })
    expect(env.ok && env.target.apiKey).toBe(KEY)
    expect(keyFromFileText(`${KEY}\r\n`)).toBe(KEY)
    expect(keyFromFileText(`${KEY}\n\n`)).toBe(`${KEY}\n`)
  })

  test('a pipe works too (process substitution: --api-key-file <(pass show endpoint))', async () => {
    const { execa } = await import('execa')
    const r = await execa(
      'bash',
      [
        '-c',
        `node -e "
      import('${new URL('../../helpers/config/load.ts', import.meta.url).pathname}').then((m) => {
        const r = m.loadConfig({ argv: process.argv.slice(1), env: {} })
        process.stdout.write(r.ok ? (r.target.apiKey === '${KEY}' ? 'key read' : 'other key') : JSON.stringify(r.problems))
      })" -- --svc demo --knob PREFILL_INTERLEAVE --base-url http://127.0.0.1:1 --api-key-file <(printf '%s\\n' '${KEY}')`,
      ],
      { reject: false },
    )
    expect(String(r.stdout), String(r.stderr)).toBe('key read')
  })

  test('a named pipe nobody writes to is an empty key file, never a hang (read in a child: a hang would stop this worker)', async () => {
    const { execa } = await import('execa')
    const fifo = join(dir, 'nobody-writes')
    await execa('mkfifo', [fifo])
    const r = await execa(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(new URL('../../helpers/config/load.ts', import.meta.url).href)})
        const r = m.loadConfig({ argv: process.argv.slice(1), env: {} })
        process.stdout.write(r.ok ? 'read a key' : r.problems.map((p) => p.message).join('\\n'))`,
        '--',
        ...['--svc', 'demo', '--knob', 'PREFILL_INTERLEAVE', '--base-url', 'http://127.0.0.1:1', '--api-key-file', fifo],
      ],
      { reject: false, timeout: 20_000 },
    )
    expect(r.timedOut, String(r.stderr)).toBe(false)
    expect(String(r.stdout)).toBe(`--api-key-file: "${fifo}" is empty; it must hold the key on one line`)
  })

  test('a flag beats env, env beats .env; two sources at the same rank are refused', () => {
    const path = keyFile('key2', 'sk-from-file\n')
    const r = load(['--api-key-file', path], { VERIFY_API_KEY: KEY })
    expect(r.ok && r.target.apiKey).toBe('sk-from-file')
    const envBeatsDotenv = load([], { VERIFY_API_KEY: KEY }, `VERIFY_API_KEY_FILE=${path}\n`)
    expect(envBeatsDotenv.ok && envBeatsDotenv.target.apiKey).toBe(KEY)
    const both = load([], { VERIFY_API_KEY: KEY, VERIFY_API_KEY_FILE: path })
    expect(messages(both)).toBe('VERIFY_API_KEY_FILE: and VERIFY_API_KEY both give the API key; keep one')
  })

  test.each([
    ['a missing file', () => join(dir, 'nope'), /cannot be read \(no such file\)/],
    ['a directory', () => (mkdirSync(join(dir, 'adir'), { recursive: true }), join(dir, 'adir')), /is a directory/],
    ['an empty file', () => keyFile('empty', ''), /is empty/],
    ['a file with only a newline', () => keyFile('nl', '\n'), /is empty/],
    ['two lines', () => keyFile('two', `${KEY}\nsecond\n`), /one token .* \(the key is not shown\)/],
    ['a key with a space', () => keyFile('space', `sk one\n`), /without spaces or newlines/],
    ['a huge file', () => keyFile('huge', 'x'.repeat(100_000)), /holds more than 65536 bytes/],
  ])('%s is refused in one line, without the key', (_name, make, message) => {
    const r = load(['--api-key-file', make()])
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.problems).toHaveLength(1)
    expect(r.problems[0]!.message).toMatch(message)
    expect(r.problems[0]!.message).toMatch(/^--api-key-file: /)
    expect(r.problems[0]!.message).not.toContain(KEY)
    expect(r.problems[0]!.message).not.toMatch(/[\r\n]/)
  })

  test('a key file others may read is used, with a warning to chmod 600 it', () => {
    const r = load(['--api-key-file', keyFile('open', `${KEY}\n`, 0o644)])
    expect(r.ok && r.target.apiKey).toBe(KEY)
    expect(r.ok && r.warnings).toEqual([expect.stringMatching(/may be read by group or others \(mode 0644\); chmod 600 it/)])
    const closed = load(['--api-key-file', keyFile('closed', `${KEY}\n`, 0o600)])
    expect(closed.ok && closed.warnings).toEqual([])
  })

  test.each([
    ['newline', `${KEY}\nx`],
    ['carriage return', `${KEY}\rx`],
    ['space', `${KEY} x`],
    ['NUL', `${KEY}\0x`],
    ['very long', 'k'.repeat(5000)],
  ])('VERIFY_API_KEY with a %s is refused without showing it', (_kind, value) => {
    const text = messages(load([], { VERIFY_API_KEY: value }))
    expect(text).toMatch(/^VERIFY_API_KEY: /)
    expect(text).not.toContain(KEY)
    expect(text).not.toContain('kkkkkkkk')
  })
})
