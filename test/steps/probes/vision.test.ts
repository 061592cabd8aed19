// The vision judge reads the reply as a reader does (issue 20): the picture's colour must be the
// answer. A denied colour ("It is not orange; it is blue."), the decoy given as the answer, or
// several candidate colours are red; right answers stay green ("It is not blue; it is orange.").
// Property tests over generated negations, hedges and lists (seeded: a failing seed is named).
import { describe, expect, test } from 'vitest'
import { COLOUR_NAMES, type ProbeColour } from '../../../helpers/steps/probes/requests.ts'
import { OTHER_COLOURS, judgeVision, readColours } from '../../../helpers/steps/probes/vision.ts'
import { pick, prng } from '../../support/prng.ts'

function reply(content: string, reasoning?: string): string {
  return JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    model: 'm',
    choices: [
      { index: 0, message: { role: 'assistant', content, ...(reasoning ? { reasoning_content: reasoning } : {}) }, finish_reason: 'stop' },
    ],
  })
}
const verdictOf = (content: string, colour: ProbeColour, decoy: ProbeColour, reasoning?: string) =>
  judgeVision(200, reply(content, reasoning), colour, decoy)

describe('examples a reader judges at a glance (picture orange, the prompt asked "Is this square blue?")', () => {
  test.each([
    'Orange',
    'orange.',
    'The square is orange.',
    'It is not blue; it is orange.',
    "It's orange, not blue.",
    "No, it's orange.",
    'No. Orange.',
    'Not blue — orange.',
    'Not blue - orange',
    'It is neither blue nor red; it is orange.',
    'Orange (not blue).',
    "I think it's orange.",
    "It's orange rather than blue.",
    "Definitely not blue, it's orange.",
    "It isn't blue. It's orange.",
    '**Orange**',
    'The colour is orange, and it is not blue.',
    'Orange! Not blue.',
    "Instead of blue, it's orange.",
    "It's not blue but orange.",
    'It is not blue and it is orange.',
    "It's not blue. Instead, it's orange.",
    "I'm not sure, but it looks orange.",
    'A solid orange square.',
    'ORANGE',
    '`orange`',
    "It's an orange-ish square.",
    'Blue is wrong; it is orange.',
    'Blue? No, orange.',
    'Is it blue? No. It is orange.',
    // A retraction of the decoy that names no colour; exclusivity that is no denial; a caveat after a contrast.
    'Blue? Not at all. Orange.',
    'Blue is not correct; it is orange.',
    'Blue? Wrong. Orange.',
    'Blue, no. Orange.',
    'Orange, nothing else.',
    'Orange and no other colour.',
    "It looks orange, but I'm not sure.",
  ])('green: %j', (content) => {
    expect(verdictOf(content, 'orange', 'blue').verdict).toBe('passed')
  })
  test.each([
    ['It is not orange; it is blue.', "gives the prompt's decoy blue as its answer, and denies orange"],
    ['It is not orange.', 'denies orange and gives no colour as its answer'],
    ['Not orange.', 'denies orange'],
    ["It isn't orange, it's red.", 'answers red, and denies orange'],
    ['Blue.', "gives the prompt's decoy blue as its answer"],
    ['Yes, it is blue.', "gives the prompt's decoy blue"],
    ['Yes.', "gives the prompt's decoy blue"],
    ['It could be orange or red.', 'several candidate colours, orange and red'],
    ['Orange, red or yellow', 'several candidate colours'],
    ['Maybe orange, maybe blue.', "(blue is the prompt's decoy)"],
    ['It is neither orange nor blue.', 'denies orange'],
    ["I don't think it's orange.", 'denies orange'],
    ["It's red rather than orange.", 'answers red, and denies orange'],
    ["Instead of orange, it's red.", 'answers red, and denies orange'],
    ['It is not, as you may think, orange.', 'denies orange'],
    ['There is no orange here.', 'denies orange'],
    ['Either orange or blue.', 'several candidate colours'],
    ["It's blue, not orange.", 'decoy blue as its answer, and denies orange'],
    ['Yellow-orange.', 'several candidate colours, orange and yellow'],
    ['It is purple.', 'answers purple'],
    ['I cannot see an image.', 'names no colour'],
    ['Orange? No.', 'denies orange'],
    ["It's orange? No, it's blue.", 'decoy blue as its answer, and denies orange'],
    ['Orange is wrong.', 'denies orange'],
    ["It's orange. Orange is incorrect; red.", 'answers red, and denies orange'],
    // The colour named, then taken back by words that do not repeat it.
    ['Orange? No way.', 'denies orange'],
    ['Orange, no.', 'denies orange'],
    ['Orange... no.', 'denies orange'],
    ['Orange?? No.', 'denies orange'],
    ['Orange? Nope.', 'denies orange'],
    ['Orange: no.', 'denies orange'],
    ['Orange is not correct.', 'denies orange'],
    ['Orange it is not.', 'denies orange'],
    ["Orange? I don't think so.", 'denies orange'],
    ['Orange? Wrong.', 'denies orange'],
    ['Orange — wrong.', 'denies orange'],
    ['Orange. Not.', 'denies orange'],
    ['Orange? Not really.', 'denies orange'],
    ['Anything but orange.', 'denies orange'],
    ["Orange? I don't think so. Blue.", 'decoy blue as its answer, and denies orange'],
  ])('red: %j', (content, why) => {
    const r = verdictOf(content, 'orange', 'blue')
    expect(r.verdict).toBe('failed')
    expect(r.observed).toContain(why)
    expect(r.observed).toContain('the picture is orange; the reply says')
    expect(r.next).toBeTruthy()
  })
  test('only content is read: colours the reasoning weighs are not the answer', () => {
    expect(verdictOf('\n\nOrange.', 'orange', 'blue', 'Is it blue? It could be red or orange. I will say orange.').verdict).toBe('passed')
    expect(verdictOf('<think>maybe red, maybe blue</think>\n\nOrange.', 'orange', 'blue').verdict).toBe('passed')
  })
  test('the reading is kept in the evidence', () => {
    expect(verdictOf('It is not blue; it is orange.', 'orange', 'blue').evidence).toMatchObject({ asserted: ['orange'], denied: ['blue'] })
    expect(readColours('It is not orange; it is blue.')).toEqual({ asserted: ['blue'], denied: ['orange'], affirms: false })
  })
})

// Generated replies: each is built from its parts so that what it answers is known by construction.
const ALL: readonly string[] = [...COLOUR_NAMES, ...OTHER_COLOURS]
const HEDGES = ['', 'I think ', 'Probably ', 'It looks ', 'It seems ', 'To me it is ', 'Clearly ', 'The answer: ']
const ENDS = ['', '.', '!', '.\n']
const WRAPS: ReadonlyArray<(s: string) => string> = [
  (s) => s,
  (s) => `**${s}**`,
  (s) => `"${s}"`,
  (s) => s.toUpperCase(),
  (s) => `\n\n${s}`,
  (s) => s.replace(/^./, (c) => c.toUpperCase()),
]
/** Ways to deny colours, each a phrase that leaves nothing open after it. */
const DENIALS: ReadonlyArray<(xs: string[]) => string> = [
  (xs) => `it is not ${xs.join(' or ')}`,
  (xs) => `it isn't ${xs.join(' or ')}`,
  (xs) => `not ${xs.join(', not ')}`,
  (xs) => `it is neither ${xs[0]} nor ${xs[1] ?? xs[0]}`,
  (xs) => `it's definitely not ${xs.join(' or ')}`,
  (xs) => `I don't see ${xs.join(' or ')}`,
  (xs) => `there is no ${xs[0]}`,
  (xs) => `${xs.join(' or ')} would be wrong`,
  (xs) => `${xs.join(' or ')}? No`,
  (xs) => `it's ${xs.join(' or ')}? No`,
]
/** Ways to take back the statement just before, naming no colour. */
const RETRACTIONS = [
  'no',
  'nope',
  'no way',
  'not really',
  'not at all',
  'not quite',
  "I don't think so",
  'wrong',
  'that is wrong',
  "it isn't",
  'not',
  'not correct',
]
/** What joins a statement to its retraction. */
const RETRACT_JOINS = ['? ', '?? ', ', ', '. ', '... ', ' — ', ': ', '! ']
/** A colour taken back inside its own clause. */
const SELF_DENIALS: ReadonlyArray<(c: string) => string> = [
  (c) => `${c} is not correct`,
  (c) => `${c} it is not`,
  (c) => `${c} is not the answer`,
  (c) => `anything but ${c}`,
  (c) => `${c} is wrong`,
]
/** What joins a denial to the statement after it. */
const JOINS = ['; ', '. ', ', ', ' — ', ' but ', ': ']

function someOthers(random: () => number, not: readonly string[], max: number): string[] {
  const pool = ALL.filter((c) => !not.includes(c))
  const n = 1 + Math.floor(random() * max)
  return [...new Set(Array.from({ length: n }, () => pick(random, pool)))]
}

function sentence(random: () => number, body: string): string {
  return pick(random, WRAPS)(`${body}${pick(random, ENDS)}`)
}

/** A right answer: the colour asserted alone, perhaps after denying the decoy and others. */
function rightAnswer(random: () => number, colour: string, decoy: string): string {
  const hedge = pick(random, HEDGES)
  // "I think", "Probably" and no hedge take a clause ("it's orange"); the others the colour itself.
  const answer = `${hedge}${['', 'I think ', 'Probably '].includes(hedge) ? "it's " : ''}${colour}`
  const form = Math.floor(random() * 4)
  if (form === 0) return sentence(random, answer)
  const denied = random() < 0.5 ? [decoy] : [decoy, ...someOthers(random, [colour, decoy], 2)]
  if (form === 1) return sentence(random, `${pick(random, DENIALS)(denied)}${pick(random, JOINS)}${answer}`)
  if (form === 2) return sentence(random, `${answer}, not ${denied.join(' or ')}`)
  return sentence(random, `${answer} rather than ${denied.join(' or ')}`)
}

/** A wrong answer, and the kind it is. */
function wrongAnswer(random: () => number, colour: string, decoy: string): [string, 'denies' | 'decoy' | 'several'] {
  const kind = Math.floor(random() * 3)
  if (kind === 0) {
    // The picture's colour denied; another colour, or none, given.
    const denial = pick(random, DENIALS)([colour, ...(random() < 0.3 ? someOthers(random, [colour], 1) : [])])
    const after =
      random() < 0.5
        ? ''
        : `${pick(random, JOINS)}it is ${pick(
            random,
            ALL.filter((c) => c !== colour),
          )}`
    return [sentence(random, `${denial}${after}`), 'denies']
  }
  if (kind === 1) {
    // The decoy given as the answer, the colour perhaps denied beside it.
    const body =
      random() < 0.5
        ? `${pick(random, HEDGES)}${decoy}`
        : random() < 0.5
          ? `yes, it is ${decoy}`
          : `${pick(random, DENIALS)([colour])}${pick(random, JOINS)}it is ${decoy}`
    return [sentence(random, body), 'decoy']
  }
  // Several candidates: the colour with others, as a list or a hedge.
  const others = someOthers(random, [colour], 3)
  const all = random() < 0.5 ? [colour, ...others] : [...others, colour]
  const forms = [
    `${all.slice(0, -1).join(', ')} or ${all.at(-1)}`,
    `it could be ${all.join(' or ')}`,
    `maybe ${all.join(', maybe ')}`,
    `${all.join(' and ')}`,
    `either ${all.join(' or ')}`,
    `${pick(random, HEDGES)}${all.join('-')}`,
  ]
  return [sentence(random, pick(random, forms)), 'several']
}

describe('property: generated replies', () => {
  const SEEDS = 400
  test('every right answer is green, whatever it denies, hedges or wraps around it', () => {
    for (let seed = 1; seed <= SEEDS; seed++) {
      const random = prng(seed)
      const colour = pick(random, COLOUR_NAMES)
      const decoy = pick(
        random,
        COLOUR_NAMES.filter((c) => c !== colour),
      )
      const content = rightAnswer(random, colour, decoy)
      const r = verdictOf(content, colour, decoy)
      expect(r.verdict, `seed ${seed}: ${JSON.stringify(content)} (picture ${colour}, decoy ${decoy}): ${r.observed}`).toBe('passed')
    }
  })
  test('no wrong answer is green: a denied colour, the decoy as the answer, several candidates', () => {
    const kinds = { denies: 0, decoy: 0, several: 0 }
    for (let seed = 1; seed <= SEEDS * 2; seed++) {
      const random = prng(1_000_000 + seed)
      const colour = pick(random, COLOUR_NAMES)
      const decoy = pick(
        random,
        COLOUR_NAMES.filter((c) => c !== colour),
      )
      const [content, kind] = wrongAnswer(random, colour, decoy)
      kinds[kind] += 1
      const r = verdictOf(content, colour, decoy)
      expect(r.verdict, `seed ${1_000_000 + seed}: ${JSON.stringify(content)} (picture ${colour}, decoy ${decoy}, ${kind})`).toBe('failed')
    }
    // The generator reached every kind.
    for (const n of Object.values(kinds)) expect(n).toBeGreaterThan(SEEDS / 4)
  })
  test("the picture's colour taken back by words that do not repeat it is never green; the decoy taken back so, then the colour, is green", () => {
    for (let seed = 1; seed <= SEEDS; seed++) {
      const random = prng(3_000_000 + seed)
      const colour = pick(random, COLOUR_NAMES)
      const decoy = pick(
        random,
        COLOUR_NAMES.filter((c) => c !== colour),
      )
      const retracted = (c: string) =>
        random() < 0.3
          ? pick(random, SELF_DENIALS)(c)
          : `${pick(random, HEDGES)}${c}${pick(random, RETRACT_JOINS)}${pick(random, RETRACTIONS)}`
      const wrong = sentence(random, retracted(colour))
      expect(verdictOf(wrong, colour, decoy).verdict, `seed ${3_000_000 + seed}: ${JSON.stringify(wrong)} (picture ${colour})`).toBe(
        'failed',
      )
      const right = `${retracted(decoy)}${pick(random, ['. ', '; ', '! ', '.\n'])}${rightAnswer(random, colour, decoy)}`
      const r = verdictOf(right, colour, decoy)
      expect(r.verdict, `seed ${3_000_000 + seed}: ${JSON.stringify(right)} (picture ${colour}, decoy ${decoy}): ${r.observed}`).toBe(
        'passed',
      )
    }
  })
  test("a right answer with the picture's colour then denied after it is never green", () => {
    for (let seed = 1; seed <= SEEDS; seed++) {
      const random = prng(2_000_000 + seed)
      const colour = pick(random, COLOUR_NAMES)
      const decoy = pick(
        random,
        COLOUR_NAMES.filter((c) => c !== colour),
      )
      const content = `${rightAnswer(random, colour, decoy)} ${pick(random, ['Actually', 'Wait', 'Hmm', 'Correction'])}, ${pick(random, DENIALS)([colour])}; it is ${decoy}.`
      expect(verdictOf(content, colour, decoy).verdict, `seed ${2_000_000 + seed}: ${JSON.stringify(content)}`).toBe('failed')
    }
  })
})
