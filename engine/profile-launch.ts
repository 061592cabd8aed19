// What engine/launch.ts needs to start an engine of a profile other than radiance: its default
// names, its argv (the profile's leading subcommand and model, the caller's args, the port), the
// env that selects the profile and its faults, and the facts its docker/kubectl shims answer.
import { FAULTS_ENV, LOAD_ENV, PROFILE_ENV } from './env.ts'
import { faultsOf, isProfileFaultName } from './profiles/faults.ts'
import type { ProfileFaultName } from './profiles/faults.ts'
import { PROFILES } from './profiles/index.ts'
import type { EmulatedProfile, ProfileName } from './profiles/types.ts'

export type { ProfileName }

export interface ProfilePlan {
  processName: string
  svc: string
  binary: string
  image: string
  /** The engine's argv after the entry script. */
  argv(port: number): string[]
  env: Record<string, string>
}

const IMAGES: Record<ProfileName, string> = {
  radiance: 'localhost/radiance:0.4.2-ref',
  vllm: 'docker.io/vllm/vllm-openai:v0.23.0',
  sglang: 'docker.io/lmsysorg/sglang:v0.5.9',
  'llama.cpp': 'ghcr.io/ggml-org/llama.cpp:server',
}

/** The plan for an emulated profile; throws on a fault that is not that profile's. */
export function profilePlan(
  profile: EmulatedProfile,
  args: readonly string[],
  faults: readonly string[],
  load?: { closedMs: number; unavailableMs: number },
): ProfilePlan {
  const def = PROFILES[profile]
  const bad = faults.filter((f) => !isProfileFaultName(f) || !faultsOf(profile).includes(f as ProfileFaultName))
  if (bad.length > 0)
    throw new Error(`startEngine: ${bad.join(', ')} is not a fault of the ${profile} profile (one of: ${faultsOf(profile).join(', ')})`)
  return {
    processName: def.processName,
    svc: def.svc,
    binary: def.binary,
    image: IMAGES[profile],
    argv: (port) => [...def.leading(args), ...args, '--port', String(port)],
    env: {
      [PROFILE_ENV]: profile,
      ...(faults.length > 0 ? { [FAULTS_ENV]: faults.join(',') } : {}),
      ...(load ? { [LOAD_ENV]: `${load.closedMs},${load.unavailableMs}` } : {}),
    },
  }
}

export const RADIANCE_IMAGE = IMAGES.radiance

/** The help command lines of each profile (its own and its verifier profile's help command): each answered from a file, not a node start. */
const HELP_ARGVS: Record<EmulatedProfile, readonly (readonly string[])[]> = {
  vllm: [['--help'], ['-h'], ['serve', '--help'], ['serve', '-h'], ['serve', '--help=all']],
  sglang: [['--help'], ['-h'], ['serve', '--help'], ['serve', '-h']],
  'llama.cpp': [['--help'], ['-h'], ['--usage']],
}

/**
 * What the engine prints for each of its help command lines, computed once by the launcher (the
 * same start() its process runs, with the container's env: a `podman exec` gets that one, not the
 * caller's): only the answers that are help (exit 0), whose stdout a shim prints with no node start
 * (llama-server's one log line on stderr, `… srv  llama_server: initializing ...`, is not replayed);
 * any other command line (or one whose env makes it an error) runs the engine.
 */
export function helpAnswers(
  profile: EmulatedProfile,
  env: Readonly<Record<string, string>>,
  faults: readonly string[],
): Array<{ argv: readonly string[]; stdout: string }> {
  const answers: Array<{ argv: readonly string[]; stdout: string }> = []
  for (const argv of HELP_ARGVS[profile]) {
    const started = PROFILES[profile].start(argv, { ...env }, new Set(faults as ProfileFaultName[]), 0)
    if (started.kind === 'exit' && started.code === 0) answers.push({ argv, stdout: started.stdout })
  }
  return answers
}
