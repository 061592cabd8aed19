// The demo's arm as the tests ask for it (PREFILL_INTERLEAVE=1 on svc demo), and its recorded
// run under fixtures/: one spelling for the many tests that verify, replay or refuse it.
export const DEMO_ARM = ['--svc', 'demo', '--knob', 'PREFILL_INTERLEAVE', '--value', '1'] as const
/** The demo's recording (`pnpm record-demo`). */
export const DEMO_FIXTURES = 'fixtures/demo/PREFILL_INTERLEAVE'
/** The demo's arm replayed from its recording. */
export const DEMO_REPLAY = [...DEMO_ARM, '--mode', 'replay', '--fixtures', DEMO_FIXTURES] as const
