// The tools probe's reply judged: a real tool_calls entry calling the probe's tool with its token
// (arguments as a string or an object), not the call written as text. Pure: no I/O.
import { NEUTRAL_PROBE_WORDS } from '../../profiles/convert.ts'
import type { ProbeWords } from '../../profiles/types.ts'
import { PROBE_TOOL } from './requests.ts'
import { endedWithoutAnswer, errorMessage, readChoice, short, type ProbeReply } from './reply.ts'

/** An endpoint served without tools on purpose may say so (helpers/config/skips.ts). */
const NO_TOOLS_ON_PURPOSE =
  '; or, if this endpoint serves no tool calls on purpose, run again with --skip probe.tools (shown skipped, never passed)'

/** `words`: the engine's own flags for tool calls (its profile's `probes:`), which every next step names. */
export function judgeTools(status: number, body: string, token: string, words: ProbeWords = NEUTRAL_PROBE_WORDS): ProbeReply {
  // llama.cpp answers tools without --jinja with HTTP 500 "tools param requires --jinja flag" (not 400).
  if (status >= 400 && /--jinja|\bjinja\b/i.test(errorMessage(body))) {
    return {
      verdict: 'failed',
      observed: `HTTP ${status}: ${short(errorMessage(body), 300)}`,
      next: `the server (llama.cpp) was started without --jinja, so it refuses tools: restart llama-server with --jinja (and a chat template that knows tools)${NO_TOOLS_ON_PURPOSE}`,
      evidence: { status, body: body.slice(0, 1000) },
    }
  }
  if (status === 400 && /tool.choice|tool-call-parser|tool_call_parser|--jinja/i.test(errorMessage(body))) {
    return {
      verdict: 'failed',
      observed: `HTTP 400: ${short(errorMessage(body), 300)}`,
      next: `tool calls misconfigured: start the engine with ${words.toolSetup}${NO_TOOLS_ON_PURPOSE}`,
      evidence: { status, body: body.slice(0, 1000) },
    }
  }
  const c = readChoice(status, body)
  if ('verdict' in c) return c
  const ended = endedWithoutAnswer(c)
  if (ended) return ended
  const calls = Array.isArray(c.message.tool_calls)
    ? (c.message.tool_calls as Array<{ function?: { name?: unknown; arguments?: unknown } }>)
    : []
  const content = typeof c.message.content === 'string' ? c.message.content : ''
  const evidence = { toolCalls: calls.slice(0, 3), content: content.slice(0, 500), finish: c.finish }
  if (calls.length === 0) {
    const asText = /<tool_call>|"name"\s*:|\bfunctions?\.|record_probe_token\s*\(/.test(content)
    return {
      verdict: 'failed',
      observed: asText
        ? `no tool_calls; the call is written as text in content: ${short(content)}`
        : `no tool_calls; content ${JSON.stringify(short(content))} (finish_reason ${c.finish || 'none'})`,
      next: asText
        ? `tool parser misconfigured: the model emits the call but the server does not parse it; check ${words.toolParser}`
        : `the model did not call the tool with tool_choice auto: check ${words.toolSetup}, and that the served model calls tools`,
      evidence,
    }
  }
  const call = calls[0]!
  const name = call.function?.name
  if (name !== PROBE_TOOL.name) {
    return {
      verdict: 'failed',
      observed: `tool_calls[0] calls ${JSON.stringify(name)}, not ${PROBE_TOOL.name}`,
      next: `the tool parser or model mangles function names: check ${words.toolParser}`,
      evidence,
    }
  }
  const raw = call.function?.arguments
  let args: unknown = raw
  if (typeof raw === 'string') {
    try {
      args = JSON.parse(raw)
    } catch {
      return {
        verdict: 'failed',
        observed: `arguments are not JSON: ${short(raw)}`,
        next: `the tool parser cuts or garbles arguments (a known hermes-parser failure): check ${words.toolParser}`,
        evidence,
      }
    }
  }
  if (!args || typeof args !== 'object' || Array.isArray(args)) {
    return {
      verdict: 'failed',
      observed: `arguments are not an object: ${short(JSON.stringify(raw))}`,
      next: `the tool parser returns malformed arguments: check ${words.toolParser}`,
      evidence,
    }
  }
  const got = (args as Record<string, unknown>).token
  if (got !== token) {
    return {
      verdict: 'failed',
      observed: `arguments ${short(JSON.stringify(args))} do not carry token "${token}"`,
      next: 'the call is parsed but its arguments are wrong: check the model and chat template',
      evidence,
    }
  }
  return {
    verdict: 'passed',
    observed: `tool_calls[0] ${PROBE_TOOL.name}(${JSON.stringify(args)})${typeof raw === 'string' ? '' : ' (arguments as an object)'}`,
    evidence,
  }
}
