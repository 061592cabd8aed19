// A real Prometheus holding the effect's scenarios: the OpenMetrics text backfilled into TSDB blocks
// by Debian's promtool (`tsdb create-blocks-from openmetrics`), then served by Debian's prometheus
// on loopback (test/support/prometheus.ts) with nothing to scrape. One TSDB, one start, every
// scenario a target (instance) of its own.
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { startPrometheus, type PrometheusHandle } from '../support/prometheus.ts'
import { openMetrics, type Scenario } from './scenarios.ts'

const run = promisify(execFile)

export interface BackfilledPrometheus extends PrometheusHandle {
  /** Samples backfilled. */
  samples: number
}

export async function backfilledPrometheus(scenarios: readonly Scenario[]): Promise<BackfilledPrometheus> {
  const dir = await mkdtemp(join(tmpdir(), 'armproof-effect-tsdb-'))
  try {
    const text = openMetrics(scenarios)
    const input = join(dir, 'traffic.om.txt')
    await writeFile(input, text)
    const data = join(dir, 'data')
    await run('promtool', ['tsdb', 'create-blocks-from', 'openmetrics', '--quiet', input, data], { maxBuffer: 16 * 1024 * 1024 })
    await rm(input)
    const prom = await startPrometheus({ targets: [], tsdb: data })
    const samples = text.split('\n').filter((l) => l && !l.startsWith('#')).length
    return {
      ...prom,
      samples,
      async stop() {
        await prom.stop()
        await rm(dir, { recursive: true, force: true })
      },
    }
  } catch (error) {
    await rm(dir, { recursive: true, force: true })
    throw error
  }
}
