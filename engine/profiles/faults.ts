// The misbehaviours of the emulated engines (`RADIANCE_REF_FAULTS=a,b`, or startEngine's `faults`
// under a profile). Each one breaks exactly one proof step of its engine, as radiance's list
// (engine/faults.ts, which re-exports this one for the docs) does.
import type { EmulatedProfile } from './types.ts'

export const PROFILE_FAULTS = [
  {
    name: 'vllm_args_line_differs',
    profile: 'vllm',
    description:
      'the `non-default args: {…}` line prints max_num_seqs one more than argv, and the engine config line the other enable_prefix_caching and kv_cache_dtype than argv asked',
  },
  {
    name: 'vllm_cache_info_differs',
    profile: 'vllm',
    description:
      '`vllm:cache_config_info` says the opposite enable_prefix_caching and another cache_dtype than the engine was started with (the log lines stay true)',
  },
  {
    name: 'vllm_kv_fp8_fallback',
    profile: 'vllm',
    description:
      'an fp8 KV cache dtype asked on the command line falls back to auto: the args line says fp8, the config line and cache_config_info say auto',
  },
  {
    name: 'vllm_prefix_cache_still',
    profile: 'vllm',
    description: 'vllm:prefix_cache_hits_total never moves, whatever the traffic (queries still count)',
  },
  {
    name: 'vllm_old_metric_names',
    profile: 'vllm',
    description:
      "the page uses a ≈v0.8 build's names: vllm:gpu_prefix_cache_{queries,hits}_total counted in blocks, vllm:gpu_cache_usage_perc, vllm:time_per_output_token_seconds, and no engine label",
  },
  {
    name: 'sglang_args_line_differs',
    profile: 'sglang',
    description: 'the `server_args=ServerArgs(…)` line prints chunked_prefill_size and max_running_requests one more than argv',
  },
  {
    name: 'sglang_server_info_differs',
    profile: 'sglang',
    description:
      '/server_info (and /get_server_info) answer chunked_prefill_size and max_running_requests one more than the engine was started with',
  },
  {
    name: 'sglang_old_server_info',
    profile: 'sglang',
    description: 'an older build: /server_info is 404, only /get_server_info answers (with no deprecation warning); must still pass',
  },
  {
    name: 'sglang_meter_still',
    profile: 'sglang',
    description: 'sglang:realtime_tokens_total and sglang:cached_tokens_total never move, whatever the traffic',
  },
  {
    name: 'sglang_old_metric_names',
    profile: 'sglang',
    description:
      'the page uses 2024-era names: sglang:num_requests_running, sglang:num_requests_waiting, sglang:cached_token, sglang:request_success_total',
  },
  {
    name: 'llamacpp_log_differs',
    profile: 'llama.cpp',
    description: 'the startup line `initializing slots, n_slots = N` prints one slot more than the engine runs',
  },
  {
    name: 'llamacpp_props_differs',
    profile: 'llama.cpp',
    description: '/props answers total_slots one more than the engine runs (the log stays true)',
  },
  {
    name: 'llamacpp_meter_still',
    profile: 'llama.cpp',
    description: 'llamacpp:prompt_tokens_total, llamacpp:tokens_predicted_total and llamacpp:n_decode_total never move',
  },
  {
    name: 'llamacpp_old_metric_names',
    profile: 'llama.cpp',
    description: "an older build's page: also the llamacpp:kv_cache_usage_ratio and llamacpp:kv_cache_tokens gauges",
  },
] as const satisfies ReadonlyArray<{ name: string; profile: EmulatedProfile; description: string }>

export type ProfileFaultName = (typeof PROFILE_FAULTS)[number]['name']

export function isProfileFaultName(name: string): name is ProfileFaultName {
  return PROFILE_FAULTS.some((f) => f.name === name)
}

/** The faults of one profile. */
export function faultsOf(profile: EmulatedProfile): ProfileFaultName[] {
  return PROFILE_FAULTS.filter((f) => f.profile === profile).map((f) => f.name)
}

export type ProfileFaults = ReadonlySet<ProfileFaultName>
