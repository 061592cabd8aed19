// The YAML library, for an engine's `--config FILE` (radiance's, ../config-file.ts; vLLM's,
// ./vllm-args.ts): imported only when a command line names one (loadYaml, awaited before that
// command line is parsed), since its import is a fifth of a bare engine start's CPU and most
// engines start without a config file.
import type * as Yaml from 'yaml'

let lib: typeof Yaml | undefined

/** Imports the YAML library; await it before parsing a command line that names a config file. */
export async function loadYaml(): Promise<void> {
  lib ??= await import('yaml')
}

/** The YAML library loadYaml imported (a parse that reads a config file without it is a bug, and throws). */
export function yaml(): typeof Yaml {
  if (lib === undefined)
    throw new Error('the YAML library is not loaded: await loadYaml() (engine/profiles/yaml.ts) before parsing a --config file')
  return lib
}
