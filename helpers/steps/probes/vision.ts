// The vision probe's reply, read as a reader reads it: which colours it gives as its answer and
// which it names only to deny them. "It is not blue; it is orange." answers orange; "It is not
// orange; it is blue." answers blue, whatever word it also contains. Pure: no I/O.
//
// A denial's scope runs from its cue (not, isn't, never, neither, nor, no <colour>, than, instead
// of, without, except) to the end of its clause. A clause ends at . ; : ! ? a line break or a
// contrast (but, however, though, although, whereas); at a comma or "and" only once the denial has
// taken a colour ("not blue, orange"): "It is not, as you may think, orange" still denies orange.
// A clause's colours are taken back by what follows them: "orange is wrong", "orange is not
// correct", "Orange, no."; a clause that denies and names no colour takes back the statement
// before it: "Orange? No way.", "Orange? I don't think so.", "Orange. Not." ("anything but" denies).
// Where the reading is unsure it errs towards denial, never towards an answer: a missed denial of
// the picture's colour would be a false green.
import { NEUTRAL_PROBE_WORDS } from '../../profiles/convert.ts'
import type { ProbeWords } from '../../profiles/types.ts'
import { COLOUR_NAMES, PROBE_MAX_TOKENS, type ProbeColour } from './requests.ts'
import { answerText, budgetOrParser, endedWithoutAnswer, readChoice, type ProbeReply } from './reply.ts'

/** Other colour words a reply might use; naming one as the answer means it saw something else. */
export const OTHER_COLOURS = ['black', 'white', 'grey', 'gray', 'pink', 'brown', 'cyan', 'magenta', 'violet', 'gold'] as const
const ALL_COLOURS: readonly string[] = [...COLOUR_NAMES, ...OTHER_COLOURS]

/** Words that deny what follows them in their clause. */
const CUES = new Set(['not', 'never', 'neither', 'nor', 'cannot', 'than', 'instead', 'without', 'except', 'nothing', 'none'])
/** Words that end a clause whatever came before. */
const CONTRASTS = new Set(['but', 'however', 'though', 'although', 'whereas', 'yet'])
/** Clause ends in the text itself. */
const STOPS = /^[.;:!?\n\u2014\u2013]$|^-{2,}$/
/** Words that deny the colours their clause named before them ("orange is wrong"). */
const AFTER_CUES = new Set(['wrong', 'incorrect', 'false', 'mistaken', 'untrue'])
/** The openers of a new statement after "and" ("and it is orange"). */
const OPENERS = new Set(['it', "it's", 'its', 'this', 'that', 'the'])

export interface ColourReading {
  /** Colours given as the answer, in the order named (each once). */
  asserted: string[]
  /** Colours named only to be denied. */
  denied: string[]
  /** The reply begins with "yes": it affirms the prompt's question ("Is this square <decoy>?"). */
  affirms: boolean
}

function tokens(text: string): string[] {
  // Words (with an apostrophe inside: isn't, it's), and the punctuation that ends a clause (a
  // spaced hyphen is a dash). A hyphen joins nothing: "orange-ish" names orange, "yellow-orange" both.
  const plain = text
    .toLowerCase()
    .replace(/[\u2018\u2019\u02bc]/g, "'")
    .replace(/\s-\s/g, ' \u2014 ')
  return plain.match(/[a-z]+(?:'[a-z]+)?|[.;:!?,\n\u2014\u2013]|-{2,}/g) ?? []
}

/** A denial's cue; `next` is the word after it ("instead" denies only as "instead of"). */
function isCue(word: string, next: string | undefined): boolean {
  if (word === 'instead') return next === 'of'
  return CUES.has(word) || word.endsWith("n't") || /^(is|are|was|were|do|does|did|can|could|would|should|wo|ai|has|have)nt$/.test(word)
}

/** Words that deny, alone, the statement before them ("Orange? No.", "Orange, nope."). */
const BARE = new Set(['no', 'nope', 'nah'])
/** In a denial's scope, these make it exclusive, not a denial: "orange, nothing else", "no other colour". */
const EXCLUSIVE = new Set(['else', 'other', 'another'])

/** Which colours the reply gives as its answer and which it denies. */
export function readColours(answer: string): ColourReading {
  const words = tokens(answer)
  const asserted: string[] = []
  const denied: string[] = []
  /** A denial is open: how many colours it has taken, and whether else/other follow it. */
  let denial: { took: number; exclusive: boolean } | null = null
  /** The colours the current clause asserted (a retraction takes them back), and how many words it has. */
  let clause: string[] = []
  let clauseWords = 0
  /** The colours of the last clause that had words, and what ended it (a retraction may take them back). */
  let prev: string[] = []
  let boundary: string | null = null
  const takeBack = (colours: readonly string[]) => {
    for (const c of colours) {
      if (asserted.includes(c)) asserted.splice(asserted.indexOf(c), 1)
      if (!denied.includes(c)) denied.push(c)
    }
  }
  /**
   * A denial that took no colour retracts: the colours its clause named before it ("orange is not
   * correct", "orange, no"), else, in a clause of no colour, the statement before it ("Orange? I
   * don't think so.", "Orange. Not."). After a contrast ("…, but I'm not sure") it is a caveat, not
   * a retraction; with else/other in its scope ("I see no other colour") it is exclusive, not a denial.
   */
  const retract = () => {
    if (clause.length) takeBack(clause)
    else if (!CONTRASTS.has(boundary ?? '')) takeBack(prev)
  }
  const endClause = (end: string | null) => {
    if (denial && denial.took === 0 && !denial.exclusive) retract()
    if (clauseWords > 0) prev = clause
    denial = null
    clause = []
    clauseWords = 0
    boundary = end
  }
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!
    const next = words[i + 1]
    // "anything but orange" denies orange; any other "but" is a contrast.
    const anythingBut = w === 'but' && words[i - 1] === 'anything'
    if (STOPS.test(w) || (CONTRASTS.has(w) && !anythingBut)) {
      endClause(w)
      continue
    }
    if (AFTER_CUES.has(w)) {
      // "orange is wrong" takes back its clause's colours; "Orange: that is wrong." the statement before.
      retract()
      clause = []
      clauseWords += 1
      continue
    }
    if ((w === ',' || (w === 'and' && OPENERS.has(next ?? ''))) && denial && denial.took > 0) {
      endClause(w)
      continue
    }
    if (w === ',') continue
    if (denial && EXCLUSIVE.has(w)) denial.exclusive = true
    if (
      BARE.has(w) &&
      (next === undefined || next === ',' || STOPS.test(next) || CONTRASTS.has(next) || next === 'way' || next === 'chance')
    ) {
      retract()
      clause = []
      clauseWords += 1
      continue
    }
    if (anythingBut || isCue(w, next)) {
      denial = { took: 0, exclusive: false }
      clauseWords += 1
      continue
    }
    clauseWords += 1
    if (ALL_COLOURS.includes(w)) {
      // "no orange", "no blue at all": "no" denies the colour right after it (a leading "No," answers the question).
      const deniedHere = denial !== null || words[i - 1] === 'no'
      if (denial) denial.took += 1
      const list = deniedHere ? denied : asserted
      if (!list.includes(w)) list.push(w)
      if (!deniedHere) clause.push(w)
    }
  }
  endClause(null)
  return { asserted, denied: denied.filter((c) => !asserted.includes(c)), affirms: words[0] === 'yes' }
}

/** The verdict on one reading, for a picture of `colour` and a prompt that named `decoy`. */
export function judgeReading(
  reading: ColourReading,
  colour: ProbeColour,
  decoy: ProbeColour,
  words: ProbeWords = NEUTRAL_PROBE_WORDS,
): { verdict: 'passed' | 'failed'; why: string; next?: string } {
  const given = reading.affirms && !reading.asserted.includes(decoy) ? [decoy, ...reading.asserted] : reading.asserted
  const blindNext = `the model gave the prompt's decoy colour (${decoy}): it did not see the image; check the server takes image_url parts (${words.visionSetup})`
  if (given.length === 1 && given[0] === colour) return { verdict: 'passed', why: `answers ${colour}` }
  if (given.length === 0) {
    if (reading.denied.includes(colour)) {
      return {
        verdict: 'failed',
        why: `denies ${colour} and gives no colour as its answer`,
        next: 'the model names the right colour only to deny it: it does not read the picture reliably; check the served model is the vision model and its image processor',
      }
    }
    return {
      verdict: 'failed',
      why: 'names no colour as its answer',
      next: 'the model did not answer with a colour: check the served model is the vision model and the server takes image_url parts',
    }
  }
  if (given.includes(colour)) {
    const others = given.filter((c) => c !== colour)
    return {
      verdict: 'failed',
      why: `gives several candidate colours, ${colour} and ${others.join(', ')}${others.includes(decoy) ? ` (${decoy} is the prompt's decoy)` : ''}`,
      next: others.includes(decoy)
        ? blindNext
        : 'the answer is a list or a hedge, not a reading of the picture: check the served model is the vision model',
    }
  }
  const denies = reading.denied.includes(colour) ? `, and denies ${colour}` : ''
  if (given.includes(decoy))
    return { verdict: 'failed', why: `gives the prompt's decoy ${given.join(', ')} as its answer${denies}`, next: blindNext }
  return {
    verdict: 'failed',
    why: `answers ${given.join(', ')}${denies}`,
    next: 'the model misreads a solid colour: check the served model is the vision model and its image processor',
  }
}

/**
 * An error that says the served model takes no images, in the engines' own words (a substring,
 * never equality: vLLM appends " None"): vLLM's "<model> is not a multimodal model", its "At most
 * 0 image(s) may be provided in one prompt." (a VLM served text-only), OpenAI's "image_url is only
 * supported by certain models", llama.cpp's "image input is not supported … mmproj".
 */
export const TAKES_NO_IMAGES =
  /is not a multimodal model|At most 0 image|image_url is only supported by certain models|image input is not supported|\bmmproj\b/i

/** `words`: the engine's own flags for images (its profile's `probes:`), which the next steps name. */
export function judgeVision(
  status: number,
  body: string,
  colour: ProbeColour,
  decoy: ProbeColour,
  maxTokens = PROBE_MAX_TOKENS,
  words: ProbeWords = NEUTRAL_PROBE_WORDS,
): ProbeReply {
  const c = readChoice(status, body)
  if ('verdict' in c) {
    if (status >= 400 && TAKES_NO_IMAGES.test(c.observed)) {
      c.next = `the served model takes no images: if it is a text-only model on purpose, run again with --skip probe.vision (shown skipped, never passed); else serve ${words.visionSetup}`
    } else if (/multimodal|image/i.test(c.observed)) {
      c.next = `the server refused the image: check it serves ${words.visionSetup}`
    }
    return c
  }
  const ended = endedWithoutAnswer(c)
  if (ended) return ended
  const answer = answerText(c.message.content)
  const evidence = { content: c.message.content ?? null, finish: c.finish, colour, decoy }
  if (answer === null || answer === '') {
    return {
      verdict: 'failed',
      observed: `content is ${answer === null ? 'null' : 'empty'} (finish_reason ${c.finish || 'none'})`,
      next:
        c.finish === 'length'
          ? `thinking ate the budget (max_tokens ${maxTokens}): a thinking model reads as blind; check the reasoning budget or chat_template_kwargs`
          : budgetOrParser(c.finish, 'the image was not seen'),
      evidence,
    }
  }
  const reading = readColours(answer)
  const judged = judgeReading(reading, colour, decoy, words)
  const quoted = JSON.stringify(answer.replace(/\s+/g, ' ').slice(0, 160))
  const read = { ...evidence, asserted: reading.asserted, denied: reading.denied }
  if (judged.verdict === 'passed') return { verdict: 'passed', observed: `picture ${colour}, reply ${quoted}`, evidence: read }
  return {
    verdict: 'failed',
    observed: `the picture is ${colour}; the reply says ${quoted}: it ${judged.why}`,
    next: judged.next!,
    evidence: read,
  }
}
