// The types of bin/compile-cache.mjs (plain JavaScript; its comments say what each does).
export declare const COMPILE_CACHE: string
export declare const MAX_ENTRIES: number
export declare function cacheEntries(dir: string): number
export declare function pruneCompileCache(dir: string, max: number): boolean
export declare function startCompileCache(env?: NodeJS.ProcessEnv): void
