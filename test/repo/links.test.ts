// Every relative link in README.md and docs/**/*.md resolves: the file (or folder) exists, and an
// anchor (`page.md#a-heading`, `#a-heading`) names a heading of that page as GitHub makes its id.
// Run over the pages present, so a page another change adds is checked as soon as it is there.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import { slug } from '../../scripts/reference-doc.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdownFiles(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
  )
}

/** The page's text without fenced code blocks (their lines are not Markdown). */
const prose = (text: string): string => text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '')

/** The anchors a page's headings get, GitHub's way (a repeated heading gets -1, -2, …), and its HTML anchors (`<a id="x">`). */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const m of prose(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(m[1]!)
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  for (const m of prose(text).matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(m[1]!)
  return out
}

/** Every relative link of a page that does not resolve, as `file: target (why)`. */
function brokenLinks(file: string, text: string, read: (path: string) => string | undefined): string[] {
  const broken: string[] = []
  // Inline code is not a link either: `[a](b)` inside backticks is text.
  const body = prose(text).replace(/`[^`\n]*`/g, '``')
  for (const m of body.matchAll(/!?\[(?:[^\]\n]|\\\])*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const href = m[1]!
    if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue
    const [path, anchor] = href.split('#') as [string, string | undefined]
    const target = path === '' ? file : resolve(dirname(file), decodeURIComponent(path))
    const shown = `${relative(ROOT, file)}: ${href}`
    const page = read(target)
    if (page === undefined) {
      broken.push(`${shown} (no such file)`)
      continue
    }
    if (anchor === undefined || anchor === '') continue
    if (!target.endsWith('.md')) broken.push(`${shown} (an anchor into a file that is not Markdown)`)
    else if (!anchorsOf(page).has(anchor)) broken.push(`${shown} (no heading #${anchor} in ${relative(ROOT, target)})`)
  }
  return broken
}

const readTarget = (path: string): string | undefined => {
  if (!existsSync(path)) return undefined
  return statSync(path).isDirectory() ? '' : readFileSync(path, 'utf8')
}

describe('the docs’ links', () => {
  const pages = [join(ROOT, 'README.md'), ...markdownFiles(join(ROOT, 'docs'))]

  test('every relative link in README.md and docs/**/*.md resolves, file and anchor', () => {
    expect(pages.length).toBeGreaterThan(20)
    expect(pages.flatMap((p) => brokenLinks(p, readFileSync(p, 'utf8'), readTarget))).toEqual([])
  })

  test('README.md links every guide, the reference, troubleshooting and the design notes', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    for (const page of markdownFiles(join(ROOT, 'docs/guide'))) expect(readme, relative(ROOT, page)).toContain(`](${relative(ROOT, page)}`)
    for (const page of ['docs/reference/README.md', 'docs/troubleshooting.md', 'docs/design/README.md', 'docs/reference/exit-codes.md'])
      expect(readme).toContain(`](${page})`)
  })
})

describe('the link checker', () => {
  const files: Record<string, string> = {
    [join(ROOT, 'docs/a.md')]: '# A\n\n## Same\n\n## Same\n\n<a id="kept"></a>\n```sh\n# not a heading\n```\n',
    [join(ROOT, 'docs/guide/b.md')]: '# B',
  }
  const read = (path: string): string | undefined => files[path]

  test('finds a missing file, a missing anchor and an anchor into a page that has none, and passes the rest', () => {
    const text = [
      '[ok](../a.md) [ok](../a.md#same-1) [here](#b) [web](https://example.com/x.md#y)',
      '[gone](../gone.md) [bad](../a.md#not-a-heading) [dup](../a.md#same-2)',
      '`[code](../gone.md)` and',
      '```',
      '[fenced](../gone.md)',
      '```',
    ].join('\n')
    expect(brokenLinks(join(ROOT, 'docs/guide/b.md'), text, read)).toEqual([
      'docs/guide/b.md: ../gone.md (no such file)',
      'docs/guide/b.md: ../a.md#not-a-heading (no heading #not-a-heading in docs/a.md)',
      'docs/guide/b.md: ../a.md#same-2 (no heading #same-2 in docs/a.md)',
    ])
  })

  test("makes GitHub's anchors: punctuation dropped, repeats numbered, code blocks ignored", () => {
    expect([...anchorsOf(files[join(ROOT, 'docs/a.md')]!)]).toEqual(['a', 'same', 'same-1', 'kept'])
  })
})
