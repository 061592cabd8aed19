// The run's random choices (the exact word, the vision colour) are a seam like the clock: live
// runs draw them, a recording keeps what was drawn (`made`), and a replay feeds the recorded ones
// back (./replay.ts), so the replayed steps ask for the very same requests.

/** Random choices of a run (the exact word, the vision colour): recorded, and fed back in replay. */
export interface Choices {
  pick<T>(name: string, options: readonly T[]): T
}

export function randomChoices(random: () => number = Math.random): Choices & { made: Record<string, unknown> } {
  const made: Record<string, unknown> = {}
  return {
    made,
    pick(name, options) {
      const value = options[Math.floor(random() * options.length)]!
      made[name] = value
      return value
    },
  }
}
