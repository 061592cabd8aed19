// The llama.cpp profile's readers on what a real llama-server printed and served: the corpus of
// fixtures/real/llama.cpp/de3ff81/ (scripts/real/capture-llama.ts, llama.cpp de3ff81, a tiny
// random-weight model). Every reader the steps use is called here on the real bytes: the log
// prefix and the boot marker, each resolved line, --help (and its --no- switches), the argv parse
// with the env twin, /metrics through armproof's Prometheus parser, /health, /props, and the
// probes' judges on the real replies.
import { describe, expect, test } from 'vitest'
import { flagNames } from '../../helpers/argparse/rules.ts'
import { resolveFlag } from '../../helpers/argparse/resolve.ts'
import { builtinProfile } from '../../helpers/profiles/load.ts'
import { parsePrometheusText } from '../../helpers/prom/parse.ts'
import { findLlamaHelpEntry, listLlamaFlags } from '../../helpers/steps/help/parse.ts'
import { judgeExact } from '../../helpers/steps/probes/exact.ts'
import { judgeTools } from '../../helpers/steps/probes/tools.ts'
import { judgeVision } from '../../helpers/steps/probes/vision.ts'
import { agree } from '../../helpers/steps/resolved/agree.ts'
import { messageOf, readLogSources } from '../../helpers/steps/resolved/log-sources.ts'
import { type CorpusCommand, llamaCommands, llamaCorpora, readLlamaCorpus } from '../support/real-corpus.ts'
import { readFileSync as readFile } from 'node:fs'
import { basename, join } from 'node:path'
import { contextRefusal } from '../../helpers/steps/meter/traffic.ts'
import { modelCards } from '../../helpers/seams/models.ts'

const read = readLlamaCorpus
const profile = builtinProfile('llama.cpp')
const engine = profile.engine
const parallel = profile.knobs.get('PARALLEL')!.spec
const logSources = engine.resolved
  .filter((s) => s.shape === 'assignments')
  .map((source) => ({ source, key: parallel.proof.sources![source.id]! }))

/** What each PARALLEL log source says in a boot log of the corpus: id → raw value or state. */
function said(log: string): Record<string, string> {
  return Object.fromEntries(readLogSources(log, engine, logSources).map((r) => [r.source.id, r.state === 'value' ? r.raw! : r.state]))
}

describe('the real log lines (fixtures/real/llama.cpp/de3ff81)', () => {
  test('every line of every boot has a message under the profile prefix, and the three real prefix forms lose theirs', () => {
    const prefix = new RegExp(`^(?:${engine.log.prefix})`)
    expect(messageOf('0.00.020.523 I srv    load_model: initializing, n_slots = 2', prefix)).toBe(
      'srv    load_model: initializing, n_slots = 2',
    )
    expect(messageOf('W srv  llama_server: security: no API key is set', prefix)).toBe('srv  llama_server: security: no API key is set')
    expect(messageOf('srv  llama_server: model loaded', prefix)).toBe('srv  llama_server: model loaded')
    for (const [file, line] of [
      ['boot-parallel-2.log', /^\d+\.\d{2}\.\d{3}\.\d{3} I srv {4}load_model: initializing, n_slots = 2,/m],
      ['boot-no-log-timestamps.log', /^I srv {4}load_model: initializing, n_slots = 2,/m],
      ['boot-no-log-prefix.log', /^srv {4}load_model: initializing, n_slots = 2,/m],
    ] as const)
      expect(read(file)).toMatch(line)
  })

  test('--parallel 2: the n_slots line printed when loading ends says 2; the trace lines are silent at the default verbosity, and that is no red', () => {
    for (const file of [
      'boot-parallel-2.log',
      'boot-env-twin.log',
      'boot-env-and-flag.log',
      'boot-no-log-prefix.log',
      'boot-no-log-timestamps.log',
      'boot-loading.log',
    ])
      expect(said(read(file)), file).toEqual({ slots: '2', 'auto-line': 'silent', context: 'silent' })
    const a = agree(parallel, '2', false, readLogSources(read('boot-parallel-2.log'), engine, logSources))
    expect(a.verdict).toBe('passed')
    expect(a.observed).toContain('n_slots=2')
    expect(a.rows.find((r) => r.reading.source.id === 'context')?.said).toContain('printed only at -lv 4 (or -v)')
  })

  test('at -lv 4 the trace lines are there: llama_context n_seq_max, and at auto the n_parallel line from srv llama_server:', () => {
    expect(said(read('boot-parallel-2-lv4.log'))).toEqual({ slots: '2', 'auto-line': 'silent', context: '2' })
    expect(said(read('boot-auto-lv4.log'))).toEqual({ slots: '4', 'auto-line': '4', context: '4' })
    const readings = readLogSources(read('boot-auto-lv4.log'), engine, logSources)
    expect(readings.find((r) => r.source.id === 'auto-line')?.auto).toBe(true)
    expect(agree(parallel, 'auto', true, readings).verdict).toBe('passed')
    // Auto at the default verbosity: only the slots line, 4 slots, allowed for auto.
    const plain = readLogSources(read('boot-auto.log'), engine, logSources)
    expect(said(read('boot-auto.log'))).toEqual({ slots: '4', 'auto-line': 'silent', context: 'silent' })
    expect(agree(parallel, 'auto', true, plain).verdict).toBe('passed')
    // The same slots line where 2 was asked: red, with what it said.
    expect(agree(parallel, '2', false, plain).verdict).toBe('failed')
  })

  test('a log holding several boots (journald, docker logs) is read from its latest: every real boot begins with the marker', () => {
    const two = `${read('boot-auto.log')}${read('boot-parallel-2.log')}`
    expect(said(two).slots).toBe('2')
    const back = `${read('boot-parallel-2.log')}${read('boot-auto.log')}`
    expect(said(back).slots).toBe('4')
    const boot = new RegExp(`^(?:${engine.log.boot})`)
    const prefix = new RegExp(`^(?:${engine.log.prefix})`)
    for (const file of ['boot-parallel-2.log', 'boot-auto-lv4.log', 'boot-no-log-prefix.log', 'boot-loading.log']) {
      const starts = read(file)
        .split('\n')
        .filter((l) => boot.test(messageOf(l, prefix) ?? ''))
      expect(starts, file).toHaveLength(1)
    }
  })

  test('while loading, the resolved line is not yet printed: it comes when loading ends (the ledger is read after /health is 200)', () => {
    const log = read('boot-loading.log')
    const lines = log.split('\n')
    const upTo = lines.findIndex((l) => l.includes('llama_context: n_ctx_seq'))
    expect(upTo).toBeGreaterThan(0)
    expect(said(lines.slice(0, upTo + 1).join('\n')).slots).toBe('silent')
    expect(said(log).slots).toBe('2')
    expect(read('health-loading.txt')).toMatch(/^HTTP\/1\.1 503 /)
    expect(JSON.parse(read('health-loading.txt').split('\n\n')[1]!)).toEqual({
      error: { message: 'Loading model', type: 'unavailable_error', code: 503 },
    })
  })
})

describe('the real --help', () => {
  const help = read('help.txt')
  test('--parallel and its alias -np, the default -1 (auto), its env twin', () => {
    const entry = findLlamaHelpEntry(help, '--parallel')!
    expect(entry.default).toBe('-1')
    expect(findLlamaHelpEntry(help, '-np')?.block).toBe(entry.block)
    expect(entry.block).toContain('(env: LLAMA_ARG_N_PARALLEL)')
  })
  test('switches list their --no- form: --cache-prompt / --no-cache-prompt, --slots / --no-slots, --jinja / --no-jinja', () => {
    const flags = new Map(listLlamaFlags(help).map((f) => [f.name, f.takesValue]))
    for (const f of ['--cache-prompt', '--no-cache-prompt', '--slots', '--no-slots', '--jinja', '--no-jinja'])
      expect(flags.get(f), f).toBe(false)
    expect(flags.get('--parallel')).toBe(true)
    expect(findLlamaHelpEntry(help, '--cache-prompt')?.block).toContain('(env: LLAMA_ARG_CACHE_PROMPT)')
    // The profile reads `--no-` as the negation of a switch, as this --help lists it.
    expect(engine.parser.negation).toBe('--no-')
  })
})

describe('the real command lines, as the argv step reads them', () => {
  const argvOf = (file: string) => llamaCommands().find((f) => f.file === file)!.argv
  const known = listLlamaFlags(read('help.txt'))
  const rules = { ...engine.parser }
  test('--parallel 2 is 2; -np spelled too', () => {
    const names = flagNames(parallel, rules)
    expect(resolveFlag(argvOf('boot-parallel-2.log'), names, rules, known).value).toBe('2')
    expect(resolveFlag(['llama-server', '-m', 'm.gguf', '-np', '3'], names, rules, known).value).toBe('3')
  })
  test('--no-cache-prompt is false for CACHE_PROMPT (a switch and its negation)', () => {
    const cache = profile.knobs.get('CACHE_PROMPT')!.spec
    const names = flagNames(cache, rules)
    expect(resolveFlag(argvOf('boot-no-cache-prompt.log'), names, rules, known).value).toBe('false')
    expect(resolveFlag(argvOf('boot-parallel-2.log'), names, rules, known).value).toBeUndefined()
  })
})

describe('the real endpoints', () => {
  test('/metrics: llamacpp: families without labels, no process_start_time_seconds; the cached-tokens counter moved on shared-prefix traffic and stayed 0 at --no-cache-prompt', () => {
    const page = parsePrometheusText(read('metrics.txt'))
    const names = page.families.map((f) => f.name)
    expect(names.every((n) => n.startsWith('llamacpp:'))).toBe(true)
    expect(names).toContain('llamacpp:prompt_tokens_cached_total')
    expect(page.errors).toEqual([])
    expect(page.samples('process_start_time_seconds')).toEqual([])
    for (const f of page.families) for (const s of f.samples) expect(Object.keys(s.labels)).toEqual([])
    const value = (text: string, name: string) => parsePrometheusText(text).samples(name)[0]!.value
    expect(value(read('metrics.txt'), 'llamacpp:prompt_tokens_cached_total')).toBeGreaterThan(0)
    expect(value(read('metrics-no-cache-prompt.txt'), 'llamacpp:prompt_tokens_cached_total')).toBe(0)
    expect(value(read('metrics-no-cache-prompt.txt'), 'llamacpp:prompt_tokens_total')).toBeGreaterThan(0)
    expect(read('metrics.headers')).toMatch(/^Content-Type: text\/plain; version=0\.0\.4$/m)
    // The header is there, but it is not the process's start time: ggml's monotonic clock in µs (the
    // machine's uptime), nowhere near the same server's wall clock in its reply's `created`: never a tie.
    const header = Number(/^Process-Start-Time-Unix: (\d+)$/m.exec(read('metrics.headers'))![1])
    const created = (JSON.parse(read('chat.json')) as { created: number }).created
    expect(Math.abs(header - created)).toBeGreaterThan(365 * 86400)
  })
  test('/metrics without --metrics is 501 with the hint to start it with --metrics', () => {
    expect(read('metrics-disabled.txt')).toMatch(/^HTTP\/1\.1 501 /)
    expect(read('metrics-disabled.txt')).toContain('Start it with `--metrics`')
  })
  test('/health is {"status":"ok"} once loaded, as the profile asks', () => {
    const body = JSON.parse(read('health.txt').split('\n\n')[1]!) as Record<string, unknown>
    expect(body).toEqual({ status: 'ok' })
    for (const [k, v] of Object.entries(engine.health.equal)) expect(body[k]).toBe(v)
  })
  test('/props: total_slots 2 and n_ctx per slot; /v1/models: owned_by llamacpp, the model by its file name', () => {
    const props = JSON.parse(read('props.json')) as { total_slots: number; default_generation_settings: { n_ctx: number } }
    expect(props.total_slots).toBe(2)
    expect(props.default_generation_settings.n_ctx).toBe(2048)
    const models = JSON.parse(read('v1-models.json')) as { data: { id: string; owned_by: string; meta: { n_ctx: number } }[] }
    expect(models.data[0]).toMatchObject({ id: 'tiny.gguf', owned_by: 'llamacpp' })
  })
  test("a prompt past a slot's context: the meter's traffic reads both numbers from the real 400 (and from vLLM's words)", () => {
    const real = read('chat-too-long.json')
    expect(contextRefusal(400, real)).toEqual({ asked: 5120, context: 2048 })
    expect(contextRefusal(200, real)).toBeNull()
    expect(contextRefusal(400, '{"error":{"message":"Loading model"}}')).toBeNull()
    expect(
      contextRefusal(
        400,
        "This model's maximum context length is 1024 tokens. However, you requested 8 output tokens and your prompt contains 1300 input tokens, for a total of 1308 tokens.",
      ),
    ).toEqual({ asked: 1308, context: 1024 })
    // /v1/models says the context one request may use: a slot's (meta.n_ctx), as the probes and the traffic size to it.
    expect(modelCards(read('v1-models.json'))).toEqual([{ id: 'tiny.gguf', root: null, maxModelLen: 2048 }])
  })
  test('the probes on the real replies of a random-weight model: true reds, each naming llama.cpp terms only', () => {
    const exact = judgeExact(200, read('chat.json'), 'kestrel')
    expect(exact.verdict).toBe('failed')
    const tools = judgeTools(200, read('chat-tools.json'), 'tok')
    expect(tools.verdict).toBe('failed')
    const vision = judgeVision(500, read('chat-image.json'), 'blue', 'orange')
    expect(vision.verdict).toBe('failed')
    expect(read('chat-image.json')).toContain('image input is not supported')
  })
})

// Every corpus of fixtures/real/llama.cpp/ (docs/real-corpus.md: an operator adds their build's with
// scripts/real/capture-llama.ts): the profile must hold on each, whatever the build and the model.
describe.each(llamaCorpora().map((dir) => [basename(dir), dir] as const))(
  'the llama.cpp profile on the corpus of build %s',
  (_build, dir) => {
    const at = (file: string) => readFile(join(dir, file), 'utf8')
    const commands = (JSON.parse(at('commands.json')) as { files: CorpusCommand[] }).files
    const known = listLlamaFlags(at('help.txt'))
    const rules = { ...engine.parser }
    test('--help lists every flag the profile reads, with the --no- forms of its switches', () => {
      for (const [, { spec }] of profile.knobs) {
        expect(findLlamaHelpEntry(at('help.txt'), spec.flag), spec.flag).toBeDefined()
        if (spec.type.kind === 'bool') expect(known.map((f) => f.name)).toContain(`--no-${spec.flag.slice(2)}`)
      }
    })
    test('each boot: its latest boot read, and the n_slots line printed when loading ends says what argv and the env twin asked', () => {
      const boots = commands.filter((c) => /^boot-.*\.log$/.test(c.file))
      expect(boots.length).toBeGreaterThan(0)
      for (const boot of boots) {
        const asked = resolveFlag(boot.argv, flagNames(parallel, rules), rules, known).value ?? boot.env.LLAMA_ARG_N_PARALLEL ?? '-1'
        const slots = readLogSources(at(boot.file), engine, logSources).find((r) => r.source.id === 'slots')!
        expect(slots.state, boot.file).toBe('value')
        if (asked === '-1') expect(Number(slots.raw), boot.file).toBeGreaterThan(0)
        else expect(slots.raw, boot.file).toBe(asked)
      }
    })
    test("every flag the probes' next steps name (the profile's probes: words) is one this build's --help lists", () => {
      const named = Object.values(engine.probes).flatMap((w) => [...w.matchAll(/--[a-z][a-z0-9-]*/g)].map((m) => m[0]))
      expect(named.length).toBeGreaterThan(0)
      for (const flag of named) expect(findLlamaHelpEntry(at('help.txt'), flag), flag).toBeDefined()
    })
    test('/metrics parses as Prometheus would read it: llamacpp: families, no labels, no errors', () => {
      const page = parsePrometheusText(at('metrics.txt'))
      expect(page.errors).toEqual([])
      expect(page.prefixes()).toEqual(['llamacpp'])
      for (const name of [engine.metrics.promptTokens!, engine.metrics.generationTokens!]) expect(page.samples(name), name).toHaveLength(1)
    })
  },
)
