// Finds the endpoint's own vault page: the Markdown page whose front matter says
// `service: <svc>`, else a page named `<svc>.md` (the rule: helpers/config/vault-page.ts, which
// verify reads the page back with). It never creates one; several owners is a refusal.
import { readFile, realpath, stat } from 'node:fs/promises'
import { basename, isAbsolute, relative, resolve, sep } from 'node:path'
import { showValue } from '../config/shell.ts'
import { declaredService, servicePages } from '../config/vault-page.ts'
import type { Refusal } from './options.ts'

const MARKDOWN = /\.(md|markdown)$/i
const SKIPPED = 'skipped .git, node_modules, hidden folders and symlinks'

export { declaredService, frontMatter, markdownFiles } from '../config/vault-page.ts'

export type PageResult = { page: string; refusals: [] } | { page?: undefined; refusals: Refusal[] }

const inside = (root: string, p: string) => {
  const rel = relative(root, p)
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel)
}

/** Discovery: front matter `service: <svc>` first, then `<svc>.md` that claims no other service. */
export async function findPage(vault: string, svc: string, shownVault: string): Promise<PageResult> {
  const { claimed, named, files } = servicePages(vault, svc)
  const rel = (list: string[]) => list.map((f) => relative(vault, f)).join(', ')
  const checked = `vault page for service ${showValue(svc)}`
  if (claimed.length === 1) return { page: claimed[0]!, refusals: [] }
  if (claimed.length > 1) {
    return {
      refusals: [
        {
          checked,
          where: shownVault,
          found: `${claimed.length} pages claim it in front matter (ambiguous owner): ${rel(claimed)}`,
          next: `keep service: ${svc} on one page only, or pass --page`,
        },
      ],
    }
  }
  if (named.length === 1) return { page: named[0]!, refusals: [] }
  if (named.length > 1) {
    return {
      refusals: [
        {
          checked,
          where: shownVault,
          found: `${named.length} pages are named ${svc}.md (ambiguous owner): ${rel(named)}`,
          next: `add service: ${svc} to the front matter of the owner, or pass --page`,
        },
      ],
    }
  }
  return {
    refusals: [
      {
        checked,
        where: shownVault,
        found: `none: looked for front matter service: ${svc} and for a file named ${svc}.md in ${files} Markdown file${files === 1 ? '' : 's'} (${SKIPPED})`,
        next: `add service: ${svc} to the endpoint's page front matter, or pass --page; writeback never creates a page`,
      },
    ],
  }
}

/** `--page`: relative to the vault (or absolute), an existing Markdown file inside it, the service's own (by front matter, else by file name). */
export async function checkPage(vault: string, page: string, svc: string, shownVault: string): Promise<PageResult> {
  const path = resolve(vault, page)
  const refuse = (found: string, next: string): PageResult => ({
    refusals: [{ checked: '--page', where: `${showValue(page)} under ${shownVault}`, found, next }],
  })
  if (/[\0\r\n]/.test(page)) return refuse('is not one path', 'pass the page path relative to the vault')
  if (!inside(vault, path)) return refuse('is outside the vault', 'pass a page inside the vault, relative to it (e.g. endpoints/llm-7.md)')
  if (!MARKDOWN.test(path)) return refuse('is not a Markdown (.md) file', "pass the endpoint's .md page")
  let real: string
  try {
    real = await realpath(path)
    if (!(await stat(real)).isFile()) return refuse('is not a file', "pass the endpoint's .md page")
  } catch {
    return refuse(
      `does not exist (looked at ${path})`,
      "pass the endpoint's existing page relative to the vault; writeback never creates a page",
    )
  }
  if (!inside(await realpath(vault), real))
    return refuse(`resolves outside the vault (to ${real})`, 'pass a page that lives inside the vault, not a symlink out of it')
  // A page belongs to a service by its front matter, else by its file name (as discovery finds it).
  const declared = declaredService(await readFile(real, 'utf8'))
  if (declared !== null && declared !== svc) {
    return refuse(
      `belongs to service ${showValue(declared)} (front matter), the report is for ${showValue(svc)}`,
      "pass this service's own page, or its own report",
    )
  }
  const named = basename(real).replace(MARKDOWN, '')
  if (declared === null && named !== svc) {
    return refuse(
      `belongs to service ${showValue(named)} by its file name (its front matter names no service), the report is for ${showValue(svc)}`,
      `pass ${svc}'s own page; if this page is ${svc}'s, add service: ${svc} to its front matter`,
    )
  }
  return { page: real, refusals: [] }
}
