// vLLM's log lines (vllm/logger.py): `%(levelname)s %(asctime)s [%(fileinfo)s:%(lineno)d] %(message)s`
// with datefmt `%m-%d %H:%M:%S`, every line of a multi-line message carrying the header, and the
// process tag a multiprocess launch puts before it (`(APIServer pid=1) `, `(EngineCore pid=…) `,
// `(Worker pid=…) `), as the real build's startup log shows.

const two = (n: number): string => String(n).padStart(2, '0')

export function vllmStamp(now: Date): string {
  return `${two(now.getMonth() + 1)}-${two(now.getDate())} ${two(now.getHours())}:${two(now.getMinutes())}:${two(now.getSeconds())}`
}

export function vllmLog(
  process: 'APIServer' | 'EngineCore' | 'Worker',
  pid: number,
  level: 'INFO' | 'WARNING' | 'ERROR',
  now: Date,
  fileinfo: string,
  message: string,
): string[] {
  const header = `(${process} pid=${pid}) ${level} ${vllmStamp(now)} [${fileinfo}] `
  return message.split('\n').map((line) => header + line)
}

/** The logo `log_version_and_model` prints on a vLLM formatter without colour; the plain line under VLLM_DISABLE_LOG_LOGO. */
export function versionMessage(version: string, model: string, logo: boolean): string {
  if (!logo) return `vLLM server version ${version}, serving model ${model}`
  return [
    '',
    '       █     █     █▄   ▄█',
    ` ▄▄ ▄█ █     █     █ ▀▄▀ █  version ${version}`,
    `  █▄█▀ █     █     █     █  model   ${model}`,
    '   ▀▀  ▀▀▀▀▀ ▀▀▀▀▀ ▀     ▀',
    '',
  ].join('\n')
}

/** Python's `f"{n:,}"`: 922496 → "922,496". */
export const thousands = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',')
