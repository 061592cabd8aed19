// The arm suite's file is loaded as JavaScript by the in-process pool (helpers/cli/suite-source.ts):
// that is exact only while the file holds no TypeScript syntax, and the hook must touch that one
// file and nothing else.
import { readFileSync } from 'node:fs'
import nodeModule from 'node:module'
import { describe, expect, test } from 'vitest'
import { ARM_SUITE_PATH, ARM_SUITE_URL, suiteAsJavaScript } from '../../helpers/cli/suite-source.ts'

type Loaded = { format: string; source: string }
const loads = (format: string) => (url: string) => ({ format, source: `// ${url}` })
const load = (url: string, format: string): Loaded =>
  suiteAsJavaScript(url, { conditions: [], format: undefined, importAttributes: {} }, loads(format) as never) as Loaded

describe('the arm suite, loaded as the JavaScript it is', () => {
  test('its file holds no TypeScript syntax: stripping its types leaves every byte as it is', () => {
    const text = readFileSync(ARM_SUITE_PATH, 'utf8')
    expect(text).toMatch(/\bopenRun\b/)
    expect(nodeModule.stripTypeScriptTypes(text)).toBe(text)
  })

  test("the hook: the suite under vitest's query (or none) becomes a JavaScript module; any other file, or a suite already JavaScript, is left as loaded", () => {
    expect(load(`${ARM_SUITE_URL}?vitest=1796150373892`, 'module-typescript')).toEqual({
      format: 'module',
      source: `// ${ARM_SUITE_URL}?vitest=1796150373892`,
    })
    expect(load(ARM_SUITE_URL, 'module-typescript').format).toBe('module')
    const beside = new URL('./_setup.ts', ARM_SUITE_URL).href
    expect(load(`${beside}?vitest=1`, 'module-typescript').format).toBe('module-typescript')
    expect(load(`${ARM_SUITE_URL}x?vitest=1`, 'module-typescript').format).toBe('module-typescript')
    expect(load(`${ARM_SUITE_URL}?vitest=1`, 'commonjs-typescript').format).toBe('commonjs-typescript')
    expect(load(`${ARM_SUITE_URL}?vitest=1`, 'module').format).toBe('module')
  })
})
