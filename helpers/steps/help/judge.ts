// Step `help`: the flag exists in the pinned build's --help (run from the running container
// image, or under a bare process from the binary the engine process runs, `{engine}`, as the
// deploy user; the engine profile says which command prints every flag, and how its entries are
// laid out), and an enum value is one of the choices printed there.
import { findHelpEntry, findLlamaHelpEntry, listFlags, listLlamaFlags, type HelpEntry } from './parse.ts'
import type { KnownFlag } from '../../argparse/rules.ts'
import { canonicalValue } from '../../config/knobs.ts'
import { expectedValue, type Outcome, type RunContext } from '../context.ts'
import { hostTrouble, runTemplate, tail, whereHost } from '../_host.ts'
import { runtimeHint } from '../_runtime.ts'
import { ENGINE_PLACEHOLDER } from '../../config/runtime.ts'
import type { EngineBinary } from '../../engine/binary.ts'
import { engineBinary } from './engine-binary.ts'

/** The binary asked, for the evidence. */
const asked = (b: EngineBinary) => ({ pid: b.pid, exe: b.exe, replaced: b.replaced, script: b.script, asked: b.words })

/** Hands on every flag --help lists (`buildFlags`), and the build's default for the knob (`buildDefault`) when it defines the flag. */
export async function checkHelp(ctx: RunContext): Promise<Outcome<'help'>> {
  const { flag } = ctx.spec
  const expected = `${flag} is listed by the pinned build's --help`
  const template = ctx.target.helpCmd
  let binary: EngineBinary | undefined
  if (template.includes(ENGINE_PLACEHOLDER)) {
    const found = await engineBinary(ctx, expected)
    if (found.kind === 'unread') return found.judgement
    binary = found.binary
  }
  const r = await runTemplate(ctx, template, binary ? { engine: binary.words } : {})
  const trouble = hostTrouble(ctx, r, expected)
  if (trouble) return binary ? { ...trouble, evidence: { ...trouble.evidence, binary: asked(binary) } } : trouble
  const where = whereHost(ctx, r.command)
  // Which build answered, where the command asked the engine's own binary.
  const from = binary ? ` (asked ${binary.said})` : ''
  const more = binary ? { binary: asked(binary) } : {}
  const { layout, noneIsUnset } = ctx.engine.help
  const found: HelpEntry | undefined = layout === 'llama' ? findLlamaHelpEntry(r.stdout, flag) : findHelpEntry(r.stdout, flag)
  // A default printed `None` is decided later by the engine (Python engines): no default of the build's.
  // Another is read as the knob reads values (llama.cpp's -1 is auto).
  const entry = found && {
    ...found,
    default: found.default === null || (noneIsUnset && found.default === 'None') ? null : canonicalValue(ctx.spec, found.default),
  }
  // argv is read against this list (a unique prefix is the flag only among every flag the build has).
  const listed: KnownFlag[] = r.exitCode === 0 ? (layout === 'llama' ? listLlamaFlags(r.stdout) : listFlags(r.stdout)) : []
  const buildFlags = { buildFlags: listed.length > 0 ? listed : null }
  if (!entry) {
    if (r.exitCode !== 0) {
      return {
        verdict: 'inconclusive',
        expected,
        observed: `the help command exited ${r.exitCode}${from}: ${tail(r.stdout) || '(no output)'}`,
        where,
        next:
          runtimeHint(ctx, r.stdout) ??
          (binary
            ? `run the help command on the host by hand as the deploy user; if the engine needs its own environment to start (a PYTHONPATH, a library path), give --help-cmd with it`
            : 'run the help command on the host by hand; set --help-cmd if the image is started differently'),
        evidence: { exitCode: r.exitCode, output: r.stdout.slice(0, 4000), ...more },
      }
    }
    return {
      verdict: 'failed',
      expected,
      observed: `--help (${r.stdout.split('\n').length} lines${from}) does not define ${flag}`,
      where,
      next: `this build does not have the knob: do not promise it; check the image tag pinned for ${ctx.target.svc}, or a newer build's --help${ctx.engine.help.flag ? ` (one flag's help: ${ctx.engine.help.flag.replaceAll('{flag}', flag.replace(/^-+/, ''))})` : ''}`,
      evidence: { helpLines: r.stdout.split('\n').length, ...more },
      gives: buildFlags,
    }
  }
  const gives = { buildDefault: entry.default, buildChoices: entry.choices, ...buildFlags }
  const evidence = { entry: entry.block, default: entry.default, choices: entry.choices, catalogDefault: ctx.spec.default, ...more }
  if (ctx.spec.type.kind !== 'enum') {
    return { verdict: 'passed', expected, observed: `${entry.block.trim().replace(/\s+/g, ' ')}${from}`, where, evidence, gives }
  }
  const value = expectedValue(ctx, entry.default)
  if (!entry.choices || entry.choices.length === 0) {
    return {
      verdict: 'inconclusive',
      expected: `${flag} lists its choices`,
      observed: `${flag} is defined but lists no choices: ${entry.block.trim().replace(/\s+/g, ' ')}`,
      where,
      next: `read the build's source or docs for the legal values of ${flag} before arming ${value ?? 'it'}`,
      evidence,
      gives,
    }
  }
  if (value === undefined) {
    return {
      verdict: 'inconclusive',
      expected: `${flag}'s default is printed, since no --value was given`,
      observed: `no default printed for ${flag}; choices ${entry.choices.join(', ')}`,
      where,
      next: `pass --value <one of ${entry.choices.join(', ')}>`,
      evidence,
      gives,
    }
  }
  if (!entry.choices.includes(value)) {
    return {
      verdict: 'failed',
      expected: `${value} is one of ${flag}'s choices`,
      observed: `${value} is not a choice; the build lists {${entry.choices.join(',')}}`,
      where,
      next: `config_parse would refuse ${value} at boot: pick one of ${entry.choices.join(', ')} and fix the service env`,
      evidence,
      gives,
    }
  }
  return {
    verdict: 'passed',
    expected: `${value} is one of ${flag}'s choices`,
    observed: `${flag} {${entry.choices.join(',')}}${entry.default !== null ? ` (default: ${entry.default})` : ''}${from}`,
    where,
    evidence,
    gives,
  }
}
