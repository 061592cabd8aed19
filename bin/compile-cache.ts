// Node's compile cache for armproof's own commands: the compiled code of every module loaded after
// this (armproof's type-stripped sources, vitest, undici) is kept on disk and reused by the next
// run, which then skips most of its compiling. Imported first by each entry, which loads its
// command with a dynamic import after it (a static import is compiled before any code runs).
// The cache goes where NODE_COMPILE_CACHE says, else Node's default in the temp folder;
// NODE_DISABLE_COMPILE_CACHE=1 turns it off.
import { enableCompileCache } from 'node:module'

enableCompileCache()
