// The few node:fs functions an engine process calls, from node:fs' CommonJS module rather than
// `import … from 'node:fs'`: building that ESM view reads every export, and its lazy getters
// (fs.promises, ReadStream, …) load fs/promises, readline and the fs streams, some 5 ms of every
// engine start's CPU, for nothing an engine does (as server.ts does for node:http).
export const { readFileSync, renameSync, rmSync, writeFileSync } = process.getBuiltinModule('node:fs')
