// A prefix cache over a prompt's tokens, in the two granularities the engines use: vLLM's KV
// blocks (a hit is whole blocks of a chained hash, capped at the prompt's length minus one, as
// KVCacheManager.get_computed_blocks does) and a token-level radix tree (SGLang's page size 1).

export class BlockPrefixCache {
  private readonly cached = new Set<string>()
  readonly blockSize: number
  constructor(blockSize: number) {
    this.blockSize = blockSize
  }

  /** The cached tokens a prompt hits (a multiple of the block size), then caches its full blocks. */
  lookupAndInsert(tokens: readonly string[]): number {
    const hashes: string[] = []
    let parent = ''
    for (let end = this.blockSize; end <= tokens.length; end += this.blockSize) {
      // node:crypto at the first prompt, not at every engine start.
      parent = process
        .getBuiltinModule('node:crypto')
        .createHash('sha256')
        .update(parent)
        .update('\u0000')
        .update(tokens.slice(end - this.blockSize, end).join('\u0001'))
        .digest('hex')
      hashes.push(parent)
    }
    const maxBlocks = Math.floor(Math.max(0, tokens.length - 1) / this.blockSize)
    let hit = 0
    while (hit < maxBlocks && this.cached.has(hashes[hit]!)) hit++
    for (const h of hashes) this.cached.add(h)
    return hit * this.blockSize
  }
}

export class RadixPrefixCache {
  private readonly prompts: string[][] = []

  /** The longest prefix (in tokens, at most the prompt's length minus one) a cached prompt shares, then caches this one. */
  lookupAndInsert(tokens: readonly string[]): number {
    let best = 0
    for (const p of this.prompts) {
      let n = 0
      while (n < p.length && n < tokens.length && p[n] === tokens[n]) n++
      best = Math.max(best, n)
    }
    this.prompts.push([...tokens])
    return Math.min(best, Math.max(0, tokens.length - 1))
  }
}
