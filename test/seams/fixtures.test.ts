// The fixture format and the replay seams, without a network: redaction before writing, the
// refusal to write a secret, exchanges served once and in order, misses that say how to re-record.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { loadConfig, type Target } from '../../helpers/config/load.ts'
import { FIXTURE_FORMAT, type FixtureSet, type HttpExchange } from '../../helpers/seams/recording-files.ts'
import { redactRequestHeaders, storedBody } from '../../helpers/seams/stored-exchange.ts'
import { replayCheck } from '../../helpers/seams/recording.ts'
import { stableJson } from '../../helpers/seams/digest.ts'
import { writeFixtures } from '../../helpers/seams/fixture-write.ts'
import { HttpError } from '../../helpers/seams/http.ts'
import { ReplayMiss, replaySeams } from '../../helpers/seams/replay.ts'
import { DEMO_ARM } from '../support/demo-args.ts'

const dir = mkdtempSync(join(tmpdir(), 'armproof-fx-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const target = (() => {
  const r = loadConfig({
    argv: [...DEMO_ARM, '--base-url', 'http://gpu-7:8000'],
    env: {},
  })
  if (!r.ok) throw new Error('bad test target')
  return r.target
})()

function exchange(seq: number, path: string, status: number, body: string): HttpExchange {
  return {
    seq,
    at: seq * 10,
    method: 'GET',
    path,
    request: { headers: {} },
    response: { status, headers: { 'content-type': 'application/json' }, body },
    durationMs: 1,
  }
}

function set(http: HttpExchange[], extra: Partial<FixtureSet['meta']> = {}): FixtureSet {
  const {
    apiKey: _k,
    mode: _m,
    fixtures: _f,
    report: _r,
    junit: _j,
    sshOpts: _s,
    caFile: _c,
    summary: _y,
    force: _o,
    ...recorded
  } = target as Target
  return {
    meta: {
      format: FIXTURE_FORMAT,
      svc: 'demo',
      knob: 'PREFILL_INTERLEAVE',
      value: '1',
      previous: null,
      baseUrl: 'http://gpu-7:8000',
      host: 'local',
      model: 'm',
      recordedAt: '2026-11-30T00:00:00.000Z',
      tool: { name: 'armproof', version: '0' },
      choices: { exactWord: 'kestrel' },
      clock: [0, 500, 2500],
      startedAtMs: 1_000_000,
      target: recorded,
      ...extra,
    },
    http,
    host: [{ seq: 9, at: 90, command: 'pidof radiance', asDeployUser: false, stdout: '4242', stderr: '', exitCode: 0, durationMs: 3 }],
  }
}

describe('what a fixture stores', () => {
  test('JSON keys are sorted at every depth, so recordings diff well', () => {
    expect(stableJson({ b: 1, a: { d: 1, c: [{ f: 1, e: 2 }] } })).toBe(
      '{\n  "a": {\n    "c": [\n      {\n        "e": 2,\n        "f": 1\n      }\n    ],\n    "d": 1\n  },\n  "b": 1\n}\n',
    )
  })
  test('auth headers are redacted before anything is kept', () => {
    expect(
      redactRequestHeaders({ Authorization: 'Bearer sk-1', 'X-Api-Key': 'k', Cookie: 'c', 'content-type': 'application/json' }),
    ).toEqual({ authorization: '[redacted]', 'x-api-key': '[redacted]', cookie: '[redacted]', 'content-type': 'application/json' })
  })
  test('a data-URL image is stored as its digest and size', () => {
    const url = `data:image/png;base64,${'A'.repeat(1000)}`
    const stored = storedBody(JSON.stringify({ messages: [{ content: [{ type: 'image_url', image_url: { url } }] }] })) as {
      messages: Array<{ content: Array<{ image_url: { url: unknown } }> }>
    }
    expect(stored.messages[0]!.content[0]!.image_url.url).toEqual({
      dataUrl: 'data:image/png;base64,',
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      bytes: url.length,
    })
  })
  test('a recording that would hold the API key is refused and writes nothing', () => {
    const folder = join(dir, 'leak')
    const leaky = set([exchange(1, '/health', 200, '{"echo":"sk-live-123456"}')])
    expect(() => writeFixtures(folder, leaky, ['sk-live-123456'])).toThrow(
      /refusing to record: the API key would land in .*http.json; nothing was written/,
    )
    expect(existsSync(folder)).toBe(false)
  })
  test('a bearer token in a header is refused even when the key is unknown', () => {
    const folder = join(dir, 'bearer')
    const leaky = set([{ ...exchange(1, '/v1/models', 200, '{}'), request: { headers: { authorization: 'Bearer abcdefgh' } } }])
    expect(() => writeFixtures(folder, leaky, [])).toThrow(/bearer token/)
    expect(existsSync(folder)).toBe(false)
  })
  test('a clean recording is written as three files', () => {
    const folder = join(dir, 'clean')
    writeFixtures(folder, set([exchange(1, '/health', 200, '{}')]), ['sk-live-123456'])
    expect(JSON.parse(readFileSync(join(folder, 'run.json'), 'utf8')).svc).toBe('demo')
    expect(readFileSync(join(folder, 'host.json'), 'utf8')).toContain('pidof radiance')
  })
})

describe('replaying a fixture set', () => {
  const fixtures = set([
    exchange(1, '/health', 503, ''),
    exchange(2, '/health', 503, ''),
    exchange(3, '/health', 200, '{"in_flight":0,"queue_cap":8}'),
  ])
  test('serves each exchange once, in recorded order (503, 503, 200), then misses with the re-record command', async () => {
    const r = replaySeams(fixtures, target, 'fixtures/demo/PREFILL_INTERLEAVE')
    const statuses = []
    for (let i = 0; i < 3; i++)
      statuses.push((await r.http.request({ method: 'GET', url: 'http://gpu-7:8000/health', timeoutMs: 1000 })).status)
    expect(statuses).toEqual([503, 503, 200])
    await expect(r.http.request({ method: 'GET', url: 'http://gpu-7:8000/health', timeoutMs: 1000 })).rejects.toThrow(
      /No recorded response for GET \/health in fixtures\/demo\/PREFILL_INTERLEAVE\/http.json. Re-record: pnpm verify --svc demo --knob PREFILL_INTERLEAVE --value 1 --base-url http:\/\/gpu-7:8000 --mode record/,
    )
  })
  test('a recorded transport failure is thrown again as the same kind of error', async () => {
    const r = replaySeams(
      set([
        {
          ...exchange(1, '/health', 0, ''),
          response: undefined,
          error: { failure: 'refused', message: 'connection refused at http://gpu-7:8000/health: ECONNREFUSED' },
        },
      ]),
      target,
      'f',
    )
    const error = await r.http.request({ method: 'GET', url: 'http://gpu-7:8000/health', timeoutMs: 1000 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(HttpError)
    expect((error as HttpError).failure).toBe('refused')
  })
  test('host commands replay by command; the clock returns the recorded readings and never sleeps', async () => {
    const r = replaySeams(fixtures, target, 'f')
    expect((await r.host.run({ script: 'pidof radiance', timeoutMs: 1000 })).stdout).toBe('4242')
    await expect(r.host.run({ script: 'pidof other', timeoutMs: 1000 })).rejects.toBeInstanceOf(ReplayMiss)
    expect([r.clock.now(), r.clock.now(), r.clock.now()]).toEqual([1_000_000, 1_000_500, 1_002_500])
    expect(() => r.clock.now()).toThrow(/read the clock more often than the recording/)
    expect(r.choices.pick('exactWord', ['kestrel', 'quasar'])).toBe('kestrel')
    expect(() => r.choices.pick('visionColour', ['red'])).toThrow(ReplayMiss)
  })
  test('replay refuses a recording made for another service, knob or value', () => {
    const folder = join(dir, 'clean')
    expect(replayCheck(folder, { svc: 'other', knob: 'BUSY_PREFILL_CHUNK', value: null }).problems).toEqual([
      `--fixtures: ${folder} was recorded for --svc demo, not other`,
      `--fixtures: ${folder} was recorded for --knob PREFILL_INTERLEAVE, not BUSY_PREFILL_CHUNK`,
      `--fixtures: ${folder} was recorded for --value 1, not the default`,
    ])
  })
})

describe('tamper evidence and one source for the target', () => {
  test('the recorder writes a digest of every file into run.json; an edit to any file is named', async () => {
    const { checkRecording } = await import('../../helpers/seams/recording.ts')
    const { writeFileSync } = await import('node:fs')
    const folder = join(dir, 'sealed')
    writeFixtures(folder, set([exchange(1, '/health', 200, '{}')]), [])
    const meta = JSON.parse(readFileSync(join(folder, 'run.json'), 'utf8'))
    expect(Object.keys(meta.digests).sort()).toEqual(['host.json', 'http.json', 'run.json'])
    expect('problem' in checkRecording(folder)).toBe(false)
    for (const [file, edit] of [
      ['http.json', (t: string) => t.replace('"/health"', '"/healthz"')],
      ['run.json', (t: string) => t.replace('"kestrel"', '"quasar"')],
      ['host.json', (t: string) => t.replace('4242', '4243')],
    ] as const) {
      const before = readFileSync(join(folder, file), 'utf8')
      writeFileSync(join(folder, file), edit(before))
      const r = checkRecording(folder)
      expect('problem' in r && r.problem).toBe(
        `fixtures edited since recording: ${join(folder, file)} no longer match the digests in run.json; re-record instead of editing`,
      )
      writeFileSync(join(folder, file), before)
    }
  })

  test('a recording whose top-level fields disagree with target.* is refused, naming both', () => {
    const folder = join(dir, 'disagree')
    const s = set([])
    writeFixtures(folder, { ...s, meta: { ...s.meta, target: { ...s.meta.target, svc: 'llm-7' } } }, [])
    expect(replayCheck(folder, { svc: 'demo', knob: 'PREFILL_INTERLEAVE', value: '1' }).problems).toEqual([
      `--fixtures: ${join(folder, 'run.json')} disagrees with itself: svc is "demo" but target.svc is "llm-7"; re-record instead of editing`,
    ])
  })

  test('leftovers() names every recorded exchange the replay never asked for', async () => {
    const r = replaySeams(set([exchange(1, '/health', 200, '{}'), exchange(2, '/metrics', 200, '')]), target, 'f')
    await r.http.request({ method: 'GET', url: 'http://gpu-7:8000/health', timeoutMs: 1000 })
    expect(r.leftovers()).toEqual(['http.json #2 GET /metrics', 'host.json #9 pidof radiance'])
  })

  test("the recorder replaces this machine's working folder, temp folder and home in what it keeps", async () => {
    const { scrubLocalPaths } = await import('../../helpers/seams/record.ts')
    const places = [
      ['/srv/ci/repo', '<cwd>'],
      ['/var/tmp', '<tmp>'],
      ['/home/ci', '<home>'],
    ] as const
    expect(scrubLocalPaths('/var/tmp/radiance-ref-1/bin\u0000/srv/ci/repo/engine/radiance.ts\u0000--port', places)).toBe(
      '<tmp>/radiance-ref-1/bin\u0000<cwd>/engine/radiance.ts\u0000--port',
    )
    expect(scrubLocalPaths('/var/tmpfs/x /srv/ci/repository /home/cider', places)).toBe('/var/tmpfs/x /srv/ci/repository /home/cider')
    // the node binary that records is the reference engine's executable (/proc/<pid>/exe): kept as <node>
    const withNode = [...places, ['/srv/ci/repo/.tools/node/bin/node', '<node>']] as const
    expect(
      scrubLocalPaths(
        '9 1700000000\n/srv/ci/repo/.tools/node/bin/node\n',
        [...withNode].sort((a, b) => b[0].length - a[0].length),
      ),
    ).toBe('9 1700000000\n<node>\n')
  })

  test("the committed recordings hold none of this machine's paths (working folder, temp folder, home, node)", () => {
    const root = join(import.meta.dirname, '../..')
    const places = [root, process.cwd(), tmpdir(), homedir(), process.execPath, dirname(process.execPath)].filter((p) => p.length > 1)
    const files = readdirSync(join(root, 'fixtures'), { recursive: true, encoding: 'utf8' }).filter(
      (f) => f.endsWith('.json') && !f.startsWith('real/'),
    )
    expect(files.length).toBeGreaterThan(4)
    const found = files.flatMap((f) => {
      const text = readFileSync(join(root, 'fixtures', f), 'utf8')
      return places.filter((p) => text.includes(p)).map((p) => `fixtures/${f}: ${p}`)
    })
    expect(found).toEqual([])
  })
})
