// A reference engine armed with PREFILL_INTERLEAVE=1 for the tests of the describe (or file) that
// calls armedEngine: started and ready before them, stopped after them.
import { afterAll, beforeAll } from 'vitest'
import { startEngine, type EngineHandle } from '../../engine/launch.ts'

/** Registers the engine's beforeAll/afterAll in the calling describe; the answer gives it once they ran. */
export function armedEngine(svc: string, processName: string): () => EngineHandle {
  let engine: EngineHandle | undefined
  beforeAll(async () => {
    engine = await startEngine({ svc, processName, args: ['--prefill-interleave', '1'] })
    await engine.waitReady()
  })
  afterAll(() => engine?.stop())
  return () => {
    if (!engine) throw new Error(`armedEngine ${svc}: asked for before its beforeAll ran`)
    return engine
  }
}
