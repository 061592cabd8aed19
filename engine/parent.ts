// What a launched engine process does for its launcher (engine/launch.ts), whatever its profile:
// it exits, removing its temp root, once the launcher's process is gone, and it marks its boot
// output as written.
import { join } from 'node:path'
import { PARENT_ENV, ROOT_ENV, bootedMarker } from './env.ts'
import { rmSync, writeFileSync } from './fs.ts'

export function watchParent(): void {
  const parent = Number(process.env[PARENT_ENV])
  if (!Number.isInteger(parent) || parent <= 0) return
  setInterval(() => {
    try {
      process.kill(parent, 0)
    } catch {
      const root = process.env[ROOT_ENV]
      if (root) rmSync(root, { recursive: true, force: true })
      process.exit(0)
    }
  }, 500).unref()
}

/** Launched by engine/launch.ts: say the boot output is in the log (stdout to a file is written synchronously). */
export function markBooted(): void {
  const root = process.env[ROOT_ENV]
  if (root) writeFileSync(join(root, bootedMarker(process.pid)), '')
}
