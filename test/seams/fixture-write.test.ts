// The fixture writer (helpers/seams/fixture-write.ts) through its fs seam: a disk that fills up,
// refuses, or mounts a file on its own fails the way a real one does, and the writer never leaves
// a half-written recording or a temp file. And every recording armproof writes reads back: any
// failure a seam can record, any option a target carries.
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { loadConfig } from '../../helpers/config/load.ts'
import { FixturesUnwritten, markRecordedVerdict, nodeFixtureFs, writeFixtures, type FixtureFs } from '../../helpers/seams/fixture-write.ts'
import { checkRecording, readFixtures, replayTarget } from '../../helpers/seams/recording.ts'
import { FIXTURE_FORMAT, recordedTarget, type FixtureSet } from '../../helpers/seams/recording-files.ts'
import { DEMO_ARM } from '../support/demo-args.ts'

const dir = mkdtempSync(join(tmpdir(), 'armproof-fw-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let n = 0
const fresh = () => join(dir, `rec-${++n}`)

const target = (() => {
  const r = loadConfig({
    argv: [...DEMO_ARM, '--base-url', 'http://gpu-7:8000'],
    env: {},
  })
  if (!r.ok) throw new Error('bad test target')
  return r.target
})()

function set(stdout = '4242', failure?: FixtureSet['host'][number]['failure']): FixtureSet {
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
      choices: {},
      clock: [0],
      startedAtMs: 1_000_000,
      target: recordedTarget(target),
    },
    http: [
      {
        seq: 1,
        at: 1,
        method: 'GET',
        path: '/health',
        request: { headers: {} },
        response: { status: 200, headers: {}, body: '{}' },
        durationMs: 1,
      },
    ],
    host: [
      {
        seq: 2,
        at: 2,
        command: 'podman logs demo',
        asDeployUser: true,
        stdout,
        stderr: '',
        exitCode: failure ? null : 0,
        ...(failure ? { failure } : {}),
        durationMs: 3,
      },
    ],
  }
}

const files = (folder: string) => (existsSync(folder) ? readdirSync(folder).sort() : [])
const texts = (folder: string) => ['run.json', 'http.json', 'host.json'].map((f) => readFileSync(join(folder, f), 'utf8'))
const errno = (code: string) => Object.assign(new Error(`${code}: simulated`), { code })

describe('writing a recording through a failing disk', () => {
  test('a full disk (the second file fails half-written): nothing new is left, an older recording stays whole', () => {
    const folder = fresh()
    writeFixtures(folder, set('old'), [])
    const before = texts(folder)
    let writes = 0
    const fs: FixtureFs = {
      ...nodeFixtureFs,
      writeFile: (p, t) => {
        if (++writes === 2) {
          nodeFixtureFs.writeFile(p, t.slice(0, 5))
          throw errno('ENOSPC')
        }
        nodeFixtureFs.writeFile(p, t)
      },
    }
    expect(() => writeFixtures(folder, set('new'), [], fs)).toThrow(FixturesUnwritten)
    expect(() =>
      writeFixtures(folder, set('new'), [], {
        ...fs,
        writeFile: (p, t) => {
          nodeFixtureFs.writeFile(p, t.slice(0, 5))
          throw errno('ENOSPC')
        },
      }),
    ).toThrow(/\(ENOSPC\); no fixture file was written or replaced/)
    expect(files(folder)).toEqual(['host.json', 'http.json', 'run.json'])
    expect(texts(folder)).toEqual(before)
  })

  test('a folder this user may not create: one line, nothing made', () => {
    const folder = fresh()
    expect(() =>
      writeFixtures(folder, set(), [], {
        ...nodeFixtureFs,
        mkdir: () => {
          throw errno('EACCES')
        },
      }),
    ).toThrow(/could not write the fixtures to .*\(EACCES\)/)
    expect(existsSync(folder)).toBe(false)
  })

  test('files mounted on their own (every rename EXDEV): copied over in place, no temp file left, the recording whole', () => {
    const folder = fresh()
    writeFixtures(folder, set('old'), [])
    writeFixtures(folder, set('new'), [], {
      ...nodeFixtureFs,
      rename: () => {
        throw errno('EXDEV')
      },
    })
    expect(files(folder)).toEqual(['host.json', 'http.json', 'run.json'])
    expect('problem' in checkRecording(folder)).toBe(false)
    expect(readFixtures(folder).host[0]!.stdout).toBe('new')
  })

  test('every rename stays inside the fixtures folder: a folder on its own mount never meets EXDEV', () => {
    const folder = fresh()
    const renames: Array<[string, string]> = []
    writeFixtures(folder, set(), [], {
      ...nodeFixtureFs,
      rename: (a, b) => {
        renames.push([a, b])
        nodeFixtureFs.rename(a, b)
      },
    })
    expect(renames.length).toBe(3)
    for (const [a, b] of renames) expect([a.startsWith(`${folder}/`), b.startsWith(`${folder}/`)]).toEqual([true, true])
    expect(renames.at(-1)![1]).toBe(join(folder, 'run.json'))
  })

  test('a swap cut short (a rename that fails): the folder holds no recording, never a mix, and no temp file', () => {
    const folder = fresh()
    writeFixtures(folder, set('old'), [])
    let renames = 0
    expect(() =>
      writeFixtures(folder, set('new'), [], {
        ...nodeFixtureFs,
        rename: (a, b) => {
          if (++renames === 2) throw errno('EIO')
          nodeFixtureFs.rename(a, b)
        },
      }),
    ).toThrow(/the folder now holds no recording \(no run\.json\)/)
    expect(files(folder)).not.toContain('run.json')
    expect(files(folder).filter((f) => f.includes('.tmp'))).toEqual([])
  })

  test('the recorded verdict that cannot be written: the recording is removed (one without its verdict replays to nothing)', () => {
    const folder = fresh()
    writeFixtures(folder, set(), [])
    expect(() =>
      markRecordedVerdict(
        folder,
        'green',
        {},
        {
          ...nodeFixtureFs,
          writeFile: () => {
            throw errno('ENOSPC')
          },
        },
      ),
    ).toThrow(/could not note the recorded verdict .*\(ENOSPC\); the recording was removed/)
    expect(files(folder)).toEqual([])
  })

  test('the recorded verdict written: the recording still verifies, and carries it', () => {
    const folder = fresh()
    writeFixtures(folder, set(), [])
    markRecordedVerdict(folder, 'red', { meter: 'failed' })
    const checked = checkRecording(folder)
    expect('problem' in checked ? checked.problem : checked.set.meta.verdict).toBe('red')
  })
})

describe('every recording armproof writes reads back', () => {
  test.each(['timeout', 'unreachable', 'host-key', 'auth', 'sudo-password', 'spawn', 'output-cut'] as const)(
    'a host command that ended %s',
    (failure) => {
      const folder = fresh()
      writeFixtures(folder, set('cut…', failure), [])
      const checked = checkRecording(folder)
      expect('problem' in checked ? checked.problem : checked.set.host[0]!.failure).toBe(failure)
    },
  )

  test('output with a line separator, a lone surrogate and control characters reads back byte for byte (a 64 MiB one: docs/writeback-faults.md)', () => {
    const folder = fresh()
    const big = `${'x'.repeat(1000)}\u2028\ud800\u0000\u001b[2J`
    writeFixtures(folder, set(big, 'output-cut'), [])
    const checked = checkRecording(folder)
    expect('problem' in checked ? checked.problem : checked.set.host[0]!.stdout === big).toBe(true)
  })

  test("an option the recording schema does not name (a newer armproof's) is kept: the digest verifies and a replay runs with it", () => {
    const folder = fresh()
    const s = set()
    writeFixtures(folder, { ...s, meta: { ...s.meta, target: { ...s.meta.target, pidCmd: 'cat /run/radiance.pid' } as never } }, [])
    const checked = checkRecording(folder)
    expect('problem' in checked ? checked.problem : 'whole').toBe('whole')
    expect((replayTarget(target, readFixtures(folder).meta) as unknown as { pidCmd?: string }).pidCmd).toBe('cat /run/radiance.pid')
  })

  test("a recording's run.json that names outputs, a key or ssh options (edited, its digests recomputed) never sets them: the invocation's stay", () => {
    const s = set()
    const planted = {
      summary: '/etc/cron.d/x',
      force: true,
      apiKey: 'sk-planted',
      sshOpts: ['-o', 'ProxyCommand=x'],
      caFile: '/x.pem',
      report: '/x.json',
      junit: '/x.xml',
      fixtures: '/x',
    }
    const replayed = replayTarget(target, { ...s.meta, target: { ...s.meta.target, ...planted } as never })
    for (const key of Object.keys(planted) as Array<keyof typeof planted>) expect([key, replayed[key]]).toEqual([key, target[key]])
    expect(replayed.mode).toBe('replay')
  })

  test('a copy of a recording verifies as the recording (the digests are of the files as written)', () => {
    const folder = fresh()
    writeFixtures(folder, set(), [])
    const other = fresh()
    nodeFixtureFs.mkdir(other)
    for (const f of ['run.json', 'http.json', 'host.json']) copyFileSync(join(folder, f), join(other, f))
    const a = checkRecording(folder)
    const b = checkRecording(other)
    expect('digest' in a && 'digest' in b && a.digest === b.digest).toBe(true)
  })
})
