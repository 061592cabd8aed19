// `node engine/launch.ts [launcher options] [-- radiance flags]`: starts one reference
// engine and keeps it up until Ctrl-C, printing what to point armproof at.
import { FAULT_NAMES, isFaultName } from './faults.ts'
import type { FaultName } from './faults.ts'
import { isProfileFaultName, PROFILE_FAULTS } from './profiles/faults.ts'
import type { ProfileFaultName } from './profiles/faults.ts'
import { isProfileName } from './profiles/types.ts'
import type { ProfileName } from './profiles/types.ts'

const USAGE = `usage: node engine/launch.ts [--profile radiance|vllm|sglang|llama.cpp] [--svc SVC] [--process NAME]
                                     [--port PORT] [--copies N] [--dropin PATH]... [--fault NAME]...
                                     [-- engine flags...]

Starts the reference engine on 127.0.0.1 (speaking radiance, or the engine --profile names) and keeps
it up until Ctrl-C.
Faults: ${FAULT_NAMES.join(', ')}
Faults of the other profiles: ${PROFILE_FAULTS.map((f) => `${f.name} (${f.profile})`).join(', ')}
`

/** What the demo needs of launch.ts's `startEngine`, passed in (launch.ts imports this module, not the other way). */
export type DemoStart = (options: {
  svc?: string
  processName?: string
  copies: number
  port: number | undefined
  faults: (FaultName | ProfileFaultName)[]
  dropins: string[]
  args: string[]
  profile: ProfileName
}) => Promise<{
  svc: string
  processName: string
  pids: readonly number[]
  baseUrl: string
  ledgerPath: string
  binDir: string
  stop(): Promise<void>
  waitReady(timeoutMs: number): Promise<unknown>
}>

export async function runDemo(argv: readonly string[], startEngine: DemoStart): Promise<void> {
  const options = {
    svc: undefined as string | undefined,
    processName: undefined as string | undefined,
    copies: 1,
    port: undefined as number | undefined,
  }
  let profile: ProfileName = 'radiance'
  const faults: (FaultName | ProfileFaultName)[] = []
  const dropins: string[] = []
  const args: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const value = (): string => {
      const v = argv[++i]
      if (v === undefined) throw new Error(`${arg} expects a value`)
      return v
    }
    if (arg === '-h' || arg === '--help') return void process.stdout.write(USAGE)
    else if (arg === '--') args.push(...argv.slice(i + 1)), (i = argv.length)
    else if (arg === '--profile') {
      const p = value()
      if (!isProfileName(p)) throw new Error(`unknown profile ${p}; one of: radiance, vllm, sglang, llama.cpp`)
      profile = p
    } else if (arg === '--svc') options.svc = value()
    else if (arg === '--process') options.processName = value()
    else if (arg === '--port') options.port = Number(value())
    else if (arg === '--copies') options.copies = Number(value())
    else if (arg === '--dropin') dropins.push(value())
    else if (arg === '--fault') {
      const f = value()
      if (!isFaultName(f) && !isProfileFaultName(f))
        throw new Error(`unknown fault ${f}; one of: ${FAULT_NAMES.join(', ')}, ${PROFILE_FAULTS.map((x) => x.name).join(', ')}`)
      faults.push(f)
    } else args.push(arg)
  }
  const engine = await startEngine({ ...options, faults, dropins, args, profile })
  const stop = (): void => void engine.stop().then(() => process.exit(0))
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
  process.stdout.write(
    `radiance reference engine "${engine.processName}" (pids ${engine.pids.join(' ')}) for svc ${engine.svc}\n` +
      `  base url : ${engine.baseUrl}\n  ledger   : ${engine.ledgerPath}\n` +
      `  shims    : export PATH=${engine.binDir}:$PATH   (podman logs ${engine.svc}; systemctl show ${engine.svc} -p DropInPaths)\n` +
      `  try      : node bin/verify.ts --svc ${engine.svc} --knob PREFILL_INTERLEAVE --base-url ${engine.baseUrl} --process ${engine.processName}\n` +
      'Ctrl-C stops it.\n',
  )
  await engine.waitReady(60_000)
  process.stdout.write(`ready: ${engine.baseUrl}/health answers 200\n`)
}
