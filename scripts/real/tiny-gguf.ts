// A tiny random-weight Llama model in GGUF, written directly (no download, no Python): the real
// llama-server of test/real/ loads it in well under a second. Two layers of width 64, a byte-level
// SentencePiece vocabulary (every byte is a token, as llama.cpp's byte fallback reads them), ChatML
// control tokens and a ChatML chat template, so /v1/chat/completions formats a conversation as a
// real chat model's would. The weights are seeded noise: the model loads, serves and answers, but
// no answer means anything (the probes' verdicts on it are true reds).
//   node scripts/real/tiny-gguf.ts OUT.gguf      writes the model
// Format: GGUF v3 (ggml's docs/gguf.md): header, key-value metadata, tensor infos, then the tensor
// data, each tensor aligned to general.alignment (32). Dimensions are written innermost first.
import { writeFileSync } from 'node:fs'

/** What the model is; the defaults are what test/real/ uses. */
export interface TinyModel {
  /** Hidden width. */
  embd: number
  layers: number
  heads: number
  ff: number
  /** llama.context_length: what `-c 0` (the default) serves, split over the slots. */
  context: number
  seed: number
  name: string
}

export const TINY: TinyModel = { embd: 64, layers: 2, heads: 4, ff: 128, context: 2048, seed: 7, name: 'armproof-tiny' }

const CHATML =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"

// GGUF value types (gguf.md).
const U32 = 4
const F32 = 6
const BOOL = 7
const STRING = 8
const ARRAY = 9
const I32 = 5
// llama.cpp's token types (llama-vocab.h).
const NORMAL = 1
const UNKNOWN = 2
const CONTROL = 3
const BYTE = 6

type Value =
  | { type: typeof U32 | typeof I32 | typeof F32; value: number }
  | { type: typeof BOOL; value: boolean }
  | { type: typeof STRING; value: string }
  | { type: typeof ARRAY; of: typeof STRING; value: readonly string[] }
  | { type: typeof ARRAY; of: typeof F32 | typeof I32; value: readonly number[] }

/** The vocabulary: <unk>, <s>, </s>, the ChatML pair, every byte, then a few whole pieces. */
function vocabulary(): { tokens: string[]; scores: number[]; types: number[] } {
  const tokens = ['<unk>', '<s>', '</s>', '<|im_start|>', '<|im_end|>']
  const types = [UNKNOWN, CONTROL, CONTROL, CONTROL, CONTROL]
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`)
    types.push(BYTE)
  }
  const pieces = ['▁', ...'abcdefghijklmnopqrstuvwxyz'.split(''), '▁the', '▁a', '▁blue', '▁red', '▁word']
  for (const piece of pieces) {
    tokens.push(piece)
    types.push(NORMAL)
  }
  const scores = tokens.map((_, i) => (types[i] === NORMAL ? -i : 0))
  return { tokens, scores, types }
}

/** A small seeded generator (mulberry32): the same file for the same seed. */
function noise(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

class Writer {
  private chunks: Buffer[] = []
  size = 0
  push(b: Buffer): void {
    this.chunks.push(b)
    this.size += b.length
  }
  u32(n: number): void {
    const b = Buffer.alloc(4)
    b.writeUInt32LE(n)
    this.push(b)
  }
  i32(n: number): void {
    const b = Buffer.alloc(4)
    b.writeInt32LE(n)
    this.push(b)
  }
  u64(n: number): void {
    const b = Buffer.alloc(8)
    b.writeBigUInt64LE(BigInt(n))
    this.push(b)
  }
  f32(n: number): void {
    const b = Buffer.alloc(4)
    b.writeFloatLE(n)
    this.push(b)
  }
  str(s: string): void {
    const b = Buffer.from(s, 'utf8')
    this.u64(b.length)
    this.push(b)
  }
  pad(to: number): void {
    const over = this.size % to
    if (over) this.push(Buffer.alloc(to - over))
  }
  bytes(): Buffer {
    return Buffer.concat(this.chunks)
  }
}

function writeValue(w: Writer, v: Value): void {
  w.u32(v.type)
  if (v.type === ARRAY) {
    w.u32(v.of)
    w.u64(v.value.length)
    for (const item of v.value) {
      if (typeof item === 'string') w.str(item)
      else if (v.of === F32) w.f32(item)
      else w.i32(item)
    }
  } else if (v.type === BOOL) w.push(Buffer.from([v.value ? 1 : 0]))
  else if (v.type === STRING) w.str(v.value)
  else if (v.type === U32) w.u32(v.value)
  else if (v.type === I32) w.i32(v.value)
  else w.f32(v.value)
}

/** The model's GGUF bytes. */
export function tinyGguf(model: TinyModel = TINY): Buffer {
  const { tokens, scores, types } = vocabulary()
  const vocab = tokens.length
  const { embd, ff, layers, heads } = model
  const meta: [string, Value][] = [
    ['general.architecture', { type: STRING, value: 'llama' }],
    ['general.name', { type: STRING, value: model.name }],
    ['general.alignment', { type: U32, value: 32 }],
    ['llama.context_length', { type: U32, value: model.context }],
    ['llama.embedding_length', { type: U32, value: embd }],
    ['llama.block_count', { type: U32, value: layers }],
    ['llama.feed_forward_length', { type: U32, value: ff }],
    ['llama.attention.head_count', { type: U32, value: heads }],
    ['llama.attention.head_count_kv', { type: U32, value: heads }],
    ['llama.attention.layer_norm_rms_epsilon', { type: F32, value: 1e-5 }],
    ['llama.rope.dimension_count', { type: U32, value: embd / heads }],
    ['llama.vocab_size', { type: U32, value: vocab }],
    ['tokenizer.ggml.model', { type: STRING, value: 'llama' }],
    ['tokenizer.ggml.tokens', { type: ARRAY, of: STRING, value: tokens }],
    ['tokenizer.ggml.scores', { type: ARRAY, of: F32, value: scores }],
    ['tokenizer.ggml.token_type', { type: ARRAY, of: I32, value: types }],
    ['tokenizer.ggml.bos_token_id', { type: U32, value: 1 }],
    ['tokenizer.ggml.eos_token_id', { type: U32, value: 4 }],
    ['tokenizer.ggml.unknown_token_id', { type: U32, value: 0 }],
    ['tokenizer.ggml.add_bos_token', { type: BOOL, value: false }],
    ['tokenizer.chat_template', { type: STRING, value: CHATML }],
  ]
  // Tensors as llama.cpp's llama architecture names them; dims innermost first.
  const tensors: [string, number[]][] = [['token_embd.weight', [embd, vocab]]]
  for (let i = 0; i < layers; i++) {
    tensors.push(
      [`blk.${i}.attn_norm.weight`, [embd]],
      [`blk.${i}.attn_q.weight`, [embd, embd]],
      [`blk.${i}.attn_k.weight`, [embd, embd]],
      [`blk.${i}.attn_v.weight`, [embd, embd]],
      [`blk.${i}.attn_output.weight`, [embd, embd]],
      [`blk.${i}.ffn_norm.weight`, [embd]],
      [`blk.${i}.ffn_gate.weight`, [embd, ff]],
      [`blk.${i}.ffn_up.weight`, [embd, ff]],
      [`blk.${i}.ffn_down.weight`, [ff, embd]],
    )
  }
  tensors.push(['output_norm.weight', [embd]], ['output.weight', [embd, vocab]])

  const w = new Writer()
  w.push(Buffer.from('GGUF', 'latin1'))
  w.u32(3)
  w.u64(tensors.length)
  w.u64(meta.length)
  for (const [key, value] of meta) {
    w.str(key)
    writeValue(w, value)
  }
  let offset = 0
  const sizes: number[] = []
  for (const [name, dims] of tensors) {
    w.str(name)
    w.u32(dims.length)
    for (const d of dims) w.u64(d)
    w.u32(0) // GGML_TYPE_F32
    w.u64(offset)
    const bytes = dims.reduce((a, b) => a * b, 1) * 4
    sizes.push(bytes)
    offset += Math.ceil(bytes / 32) * 32
  }
  w.pad(32)
  const next = noise(model.seed)
  tensors.forEach(([name], i) => {
    const data = Buffer.alloc(Math.ceil(sizes[i]! / 32) * 32)
    const norm = name.includes('norm')
    for (let j = 0; j < sizes[i]! / 4; j++) data.writeFloatLE(norm ? 1 : (next() - 0.5) * 0.2, j * 4)
    w.push(data)
  })
  return w.bytes()
}

if (import.meta.main) {
  const out = process.argv[2]
  if (!out) {
    console.error('usage: node scripts/real/tiny-gguf.ts OUT.gguf')
    process.exit(2)
  }
  writeFileSync(out, tinyGguf())
  console.log(out)
}
