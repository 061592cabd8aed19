import { readFileSync } from 'node:fs'
import { expect, test } from 'vitest'
import { SERVE_OPTIONS, withServeOptionsTable } from '../../helpers/serve/options.ts'

test("docs/guide/serve.md's options table is the one generated from helpers/serve/options.ts (run pnpm faults-doc after changing it)", () => {
  const text = readFileSync(new URL('../../docs/guide/serve.md', import.meta.url), 'utf8')
  expect(text).toBe(withServeOptionsTable(text))
  for (const o of SERVE_OPTIONS) expect(text).toContain(`\`--${o.flag}\` | \`${o.env}\``)
})
