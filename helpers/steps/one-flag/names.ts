// The knob's names in a one-flag record (helpers/config/arm-record.ts): what may differ between the
// baseline and the arm. Its flag's every spelling and negation, as the engine's parser names them,
// and its env twin as `$NAME`.
import { flagNames, type ParserRules } from '../../argparse/rules.ts'
import type { KnobSpec } from '../../profiles/types.ts'

export function knobRecordNames(
  spec: Pick<KnobSpec, 'flag' | 'aliases' | 'type' | 'envTwin'>,
  parser: Pick<ParserRules, 'negation'>,
): string[] {
  const names = flagNames(spec, parser)
  return [...names.names, ...(names.switch?.negated ? [names.switch.negated] : []), ...(spec.envTwin ? [`$${spec.envTwin}`] : [])]
}
