// The emulated engines by profile name: how each starts from its argv and env, what the launcher
// names its process and service by default, the argv a launch gets when the caller gives none of
// its own required parts, and how its load looks (the port closed, then 503s).
import type { ProfileFaults } from './faults.ts'
import { startLlama } from './llamacpp.ts'
import { startSglang } from './sglang.ts'
import type { EmulatedProfile, Start } from './types.ts'
import { DEFAULT_MODEL } from './vllm-args.ts'
import { startVllm } from './vllm.ts'

export interface ProfileDefinition {
  start(argv: readonly string[], env: NodeJS.ProcessEnv, faults: ProfileFaults, pid: number): Start
  /** argv[0]'s basename, what `pidof` finds: the real engine's process name. */
  processName: string
  svc: string
  /** The command inside the container that runs the engine (`docker exec <svc> vllm …`). */
  binary: string
  /** The argv a launch starts with, before the caller's args (the subcommand and the model). */
  leading(args: readonly string[]): string[]
  /** Milliseconds the port stays closed, then answers 503 while loading. */
  load: { closedMs: number; unavailableMs: number }
}

export const PROFILES: Record<EmulatedProfile, ProfileDefinition> = {
  vllm: {
    start: startVllm,
    processName: 'vllm',
    svc: 'vllm-ref',
    binary: 'vllm',
    // A deployment that serves tool calls: real vLLM refuses tool_choice auto without both flags.
    leading: (args) => (args[0] === 'serve' ? [] : ['serve', DEFAULT_MODEL, '--enable-auto-tool-choice', '--tool-call-parser', 'hermes']),
    load: { closedMs: 300, unavailableMs: 0 },
  },
  sglang: {
    start: (argv, env, faults) => startSglang(argv, env, faults),
    processName: 'sglang',
    svc: 'sglang-ref',
    binary: 'sglang',
    leading: (args) => (args.some((a) => /^--model(-path)?(=|$)/.test(a)) ? [] : ['--model-path', 'qwen/qwen2.5-0.5b-instruct']),
    load: { closedMs: 200, unavailableMs: 300 },
  },
  'llama.cpp': {
    start: (argv, env, faults) => startLlama(argv, env, faults),
    processName: 'llama-server',
    svc: 'llamacpp-ref',
    binary: 'llama-server',
    // The reference model reads images: started without a model, it is served as a vision model is, with its projector.
    leading: (args) =>
      args.some((a) => a === '-m' || a === '--model')
        ? []
        : [
            '-m',
            'models/qwen2.5-0.5b-instruct-q4_k_m.gguf',
            ...(args.some((a) => a === '-mm' || a === '--mmproj') ? [] : ['--mmproj', 'models/mmproj-f16.gguf']),
          ],
    load: { closedMs: 100, unavailableMs: 400 },
  },
}
