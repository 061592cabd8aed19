// The proof steps' ids, in run order: the one piece of the step table (helpers/steps/registry.ts)
// that the layers below the steps need, to check what names a step (a recording's verdicts,
// `--skip`). The registry's entries must carry exactly these ids in this order: it does not
// compile otherwise.
const IDS = ['dropins', 'help', 'argv', 'ledger', 'health', 'probe.exact', 'probe.tools', 'probe.vision', 'meter', 'one-flag'] as const

/** The ids as a tuple type, for the registry's check of its own order. */
export type StepIdOrder = typeof IDS
export type StepId = StepIdOrder[number]

/** The contract's step ids, in run order. */
export const STEP_IDS: readonly StepId[] = IDS
