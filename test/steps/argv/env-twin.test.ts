// A flag's env twin read from the engine's own environment (helpers/steps/argv/env-twin.ts), where
// the engine's /proc is: on the host, or in its pod through kubectl exec (the pid argv read is the
// pod's own; the host's /proc/<pid> would be another process), and only the twin's line leaves it.
import { describe, expect, test } from 'vitest'
import { readEnvTwin } from '../../../helpers/steps/argv/env-twin.ts'
import { answeringHost, stepContext, stepTarget } from '../../support/step-context.ts'

const TWIN = 'LLAMA_ARG_N_PARALLEL'

describe('the env twin, read where the engine runs', () => {
  test("on the host: the pid's environ, privileged; its value", async () => {
    const host = answeringHost(() => ({ stdout: `${TWIN}=4\n` }))
    const r = await readEnvTwin(stepContext(stepTarget(['--knob', 'PREFILL_INTERLEAVE']), host), '4242', TWIN)
    expect('value' in r && r.value).toBe('4')
    expect(host.calls).toHaveLength(1)
    expect(host.calls[0]!.privileged).toBe(true)
    expect(host.calls[0]!.script).toMatch(/^e=\$\(tr '\\0' '\\n' < \/proc\/'?4242'?\/environ\)/)
  })

  test("in a pod: through kubectl exec into the pod, never the host's /proc of that pid", async () => {
    const host = answeringHost(() => ({ stdout: '' }))
    const target = stepTarget(['--knob', 'PREFILL_INTERLEAVE', '--runtime', 'kubernetes', '--host', 'llm/pod-7'])
    const r = await readEnvTwin(stepContext(target, host), '1', TWIN)
    expect('value' in r && r.value).toBeUndefined()
    expect(host.calls).toHaveLength(1)
    expect(host.calls[0]!.script).toMatch(/^kubectl exec --namespace=llm pod-7 -- sh -c /)
    expect(host.calls[0]!.script).toContain('/proc/')
    expect(host.calls[0]!.privileged).toBeUndefined()
  })
})
