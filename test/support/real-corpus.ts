// Where the real engines' captured output lives (fixtures/real/): the reference the profiles' readers
// and the reference engine's emulations are checked against (test/real/).
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** llama.cpp de3ff81, captured by scripts/real/capture-llama.ts. */
export const LLAMA_CORPUS = fileURLToPath(new URL('../../fixtures/real/llama.cpp/de3ff81/', import.meta.url))

/** One file of the llama.cpp corpus, as text. */
export const readLlamaCorpus = (file: string): string => readFileSync(join(LLAMA_CORPUS, file), 'utf8')

/** How each file of the llama.cpp corpus was made: the argv (llama-server first) and the env. */
export interface CorpusCommand {
  file: string
  argv: string[]
  env: Record<string, string>
  what: string
}
export const llamaCommands = (): CorpusCommand[] => (JSON.parse(readLlamaCorpus('commands.json')) as { files: CorpusCommand[] }).files

/** Every llama.cpp corpus under fixtures/real/llama.cpp/ (one folder a build): ours, and any an operator captured. */
export const llamaCorpora = (): string[] =>
  readdirSync(join(LLAMA_CORPUS, '..'), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => join(LLAMA_CORPUS, '..', e.name))
