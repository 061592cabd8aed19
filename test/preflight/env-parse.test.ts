// The env file as every reader of it agrees (systemd's EnvironmentFile=, podman's and docker's
// --env-file, dotenv): the subset read, and each line outside it named by its number, never its value.
import { parse as parseDotenv } from 'dotenv'
import { describe, expect, test } from 'vitest'
import { fromOdHex, parseEnvFile, parseEnviron } from '../../helpers/steps/preflight/env-parse.ts'
import { secretVariable } from '../../helpers/seams/redact.ts'
import { pick, prng } from '../support/prng.ts'

describe('parseEnvFile', () => {
  test('NAME=value lines, comments and blank lines; the last of a name wins and is named', () => {
    const f = parseEnvFile('# the service\n\nPREFILL_INTERLEAVE=1\nMODEL=/models/a\nEMPTY=\r\nMODEL=/models/b\n  # indented comment\n')
    expect(f.problems).toEqual([])
    expect([...f.vars.values()].map((e) => [e.name, e.value, e.line])).toEqual([
      ['PREFILL_INTERLEAVE', '1', 3],
      ['MODEL', '/models/b', 6],
      ['EMPTY', '', 5],
    ])
    expect(f.duplicates).toEqual(['MODEL'])
  })

  test.each([
    ['export A=1', /`export`/],
    ['A = 1', /space around the name/],
    ['A= 1', /starts or ends with a space/],
    ['A="1"', /quoted value/],
    ["A='1'", /quoted value/],
    ['A=1\\', /backslash/],
    ['A=1 # one', /"#" in the value/],
    ['; systemd comment', /";" comment/],
    ['JUSTANAME', /not NAME=value/],
    ['1A=x', /not \[A-Za-z_\]/],
  ])('%s is outside the subset, named by its line and never its value', (line, why) => {
    const f = parseEnvFile(`OK=1\n${line}\n`)
    expect(f.problems).toHaveLength(1)
    expect(f.problems[0]!.line).toBe(2)
    expect(f.problems[0]!.why).toMatch(why)
    expect(f.problems[0]!.why).not.toContain(line)
  })

  // Property: a line the subset accepts is read as dotenv 17.4.1 (the pinned reader) reads it.
  test('every line the subset accepts reads the same under dotenv (500 random files)', () => {
    const random = prng(38)
    let read = 0
    const chars = ['a', 'Z', '0', '9', '_', '-', '.', '/', ':', '@', '=', ',', '+', '%', ' ', '$', '{', '}', '!', '~', 'é']
    for (let n = 0; n < 500; n++) {
      const lines: string[] = []
      for (let i = 0; i < 1 + Math.floor(random() * 6); i++) {
        const name = `${pick(random, ['A', 'B', '_X', 'MODEL_DIR', 'K9'])}`
        const value = Array.from({ length: Math.floor(random() * 12) }, () => pick(random, chars)).join('')
        lines.push(`${name}=${value}`)
      }
      const text = `${lines.join('\n')}\n`
      const f = parseEnvFile(text)
      if (f.problems.length > 0) continue
      read++
      const ours = Object.fromEntries([...f.vars.values()].map((e) => [e.name, e.value]))
      expect(parseDotenv(text), `seed 38, file ${n}: ${JSON.stringify(text)}`).toEqual(ours)
    }
    // Most files are inside the subset (a value ending in a space is not): the property is about many.
    expect(read).toBeGreaterThan(150)
  })
})

describe('the engine environment read', () => {
  test('od -An -tx1 hex back to NUL-separated NAME=value entries, a value with a newline whole', () => {
    const bytes = Buffer.from('PATH=/bin\0MULTI=a\nb\0EQ=x=y\0', 'utf8')
    const od = bytes
      .toString('hex')
      .replace(/(..)/g, ' $1')
      .replace(/((?: ..){16})/g, '$1\n')
    const text = fromOdHex(od)
    expect(text).toBeDefined()
    expect([...parseEnviron(text!)]).toEqual([
      ['PATH', '/bin'],
      ['MULTI', 'a\nb'],
      ['EQ', 'x=y'],
    ])
    expect(fromOdHex('zz')).toBeUndefined()
  })

  test('a variable whose name or value looks secret is never shown', () => {
    for (const name of ['VERIFY_API_KEY', 'HF_TOKEN', 'DB_PASSWORD', 'AWS_SECRET_ACCESS_KEY', 'SESSION_ID', 'TLS_CERT'])
      expect(secretVariable(name, 'x'), name).toBe(true)
    expect(secretVariable('MODEL_DIR', '/models/a')).toBe(false)
    expect(secretVariable('DATABASE_URL', 'postgres://app:hunter2@db:5432/x')).toBe(true)
    expect(secretVariable('UPSTREAM', 'http://gpu-7:8000')).toBe(false)
    expect(secretVariable('EXTRA', 'Bearer sk-123', 'sk-123')).toBe(true)
    // a token under a name that says nothing: its shape gives it away
    expect(secretVariable('OPENAI', 'sk-proj-Abc123def456ghi789')).toBe(true)
    expect(secretVariable('HUB', 'hf_AbCdEfGhIjKlMnOpQrStUv')).toBe(true)
    expect(secretVariable('UPSTREAM_HEADER', 'x ghp_0123456789abcdefABCDEF')).toBe(true)
    expect(secretVariable('SEED', '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08')).toBe(true)
    // ordinary values stay shown: a model id, a path, a number, a long word without digits
    expect(secretVariable('MODEL', 'Qwen/Qwen3-0.6B')).toBe(false)
    expect(secretVariable('MODEL_DIR', '/models/meta-llama-3.1-8b-instruct-q4_k_m')).toBe(false)
    expect(secretVariable('MAX_NUM_SEQS', '256')).toBe(false)
    expect(secretVariable('SCHEDULER', 'prefill_interleave_with_decode_priority')).toBe(false)
  })
})
