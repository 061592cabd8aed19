// `pnpm demo --engine vllm|sglang|llama.cpp`: the engine side of the demo for a profile armproof
// cannot verify yet. It starts the reference engine speaking that engine on loopback, shows what
// the proof will read (its resolved-values log line, its self-description, its meter families), and
// says plainly that nothing was verified: the verdict is inconclusive (exit 3), never green.
import type { EngineHandle, EngineOptions } from './launch.ts'
import type { EmulatedProfile } from './profiles/types.ts'

/** The knob each demo arms, as the profile's built-in catalog will (issue 23). */
const ARMED: Record<EmulatedProfile, { knob: string; args: string[]; evidence: RegExp; self: string; show(text: string): string }> = {
  vllm: { knob: 'MAX_NUM_SEQS=8', args: ['--max-num-seqs', '8'], evidence: /non-default args: .*$/m, self: '/metrics', show: (t) => `${t.split('\n').filter((l) => l.startsWith('# TYPE ')).length} metric families` },
  sglang: { knob: 'CHUNKED_PREFILL_SIZE=4096', args: ['--chunked-prefill-size', '4096', '--enable-metrics'], evidence: /server_args=ServerArgs\(.{0,60}/, self: '/server_info', show: (t) => `chunked_prefill_size ${(JSON.parse(t) as { chunked_prefill_size: number }).chunked_prefill_size}` },
  'llama.cpp': { knob: 'PARALLEL=2', args: ['-np', '2', '--metrics'], evidence: /initializing slots, n_slots = \d+/, self: '/props', show: (t) => `total_slots ${(JSON.parse(t) as { total_slots: number }).total_slots}` },
}

/** `verify` is how the caller names the verify command (armproof verify, pnpm verify, …): the engine knows nothing of armproof's launchers. */
export async function runProfileDemo(profile: EmulatedProfile, start: (o: EngineOptions) => Promise<EngineHandle>, out: NodeJS.WritableStream, verify = 'verify'): Promise<number> {
  const armed = ARMED[profile]
  const engine = await start({ profile, svc: 'demo', args: armed.args })
  try {
    await engine.waitReady(60_000)
    const { readFileSync } = await import('node:fs')
    const log = readFileSync(engine.ledgerPath, 'utf8')
    const selfText = await (await fetch(`${engine.baseUrl}${armed.self}`, { signal: AbortSignal.timeout(5000) })).text()
    out.write(
      `reference engine speaking ${profile} (pid ${engine.pids.join(' ')}, process ${engine.processName}) at ${engine.baseUrl}, ${armed.knob} armed\n` +
        `  log      : ${(armed.evidence.exec(log)?.[0] ?? '(the resolved-values line is missing)').slice(0, 160)}\n` +
        `  ${armed.self.padEnd(9)}: ${armed.show(selfText)}\n` +
        `  shims    : podman, docker, kubectl and systemctl answer for svc ${engine.svc} (PATH=${engine.binDir}:$PATH)\n` +
        `INCONCLUSIVE · not verified: armproof does not verify the ${profile} profile yet; that lands with the engine profiles (issue 23, ${verify} --engine ${profile}). Nothing was proven.\n`,
    )
    return 3
  } finally {
    await engine.stop()
  }
}
