// The targets file read and checked off serve's main thread (helpers/serve/targets.ts
// loadTargetsOffThread): a file of 1,000 targets takes about 100 ms to check, which on the main
// thread would hold every answer (`/healthz` too) that long, once per change. This thread checks
// it exactly as serve's start does (loadServedTargets) and posts the result back; it touches
// nothing else and ends with that one message.
import { parentPort, workerData } from 'node:worker_threads'
import { loadServedTargets } from './targets.ts'

export interface TargetsJob {
  file: string
  env: Record<string, string | undefined>
  cwd: string
  dotenv: string | undefined
}

const job = workerData as TargetsJob
parentPort!.postMessage(loadServedTargets(job.file, job.env, job.cwd, job.dotenv))
