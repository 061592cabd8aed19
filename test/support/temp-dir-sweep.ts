// The unit project's setup file (vitest.config.ts setupFiles): vitest runs it again before each
// test file, so these hooks are that file's last ones (afterAll hooks run in reverse order), and
// run whether its tests passed or not:
// - the folders the file's tests and helpers made with tempDir go;
// - the ssh master connections the file's in-process runs opened are closed, and their folder
//   (helpers/seams/host-sessions.ts) goes: a process does that at exit, but vitest ends its
//   workers with a signal, where no exit hook runs.
import { afterAll } from 'vitest'
import { closeMasters } from '../../helpers/seams/host-sessions.ts'
import { removeTempDirs } from './temp-dir.ts'

afterAll(removeTempDirs)
afterAll(closeMasters)
