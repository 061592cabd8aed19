// The Containerfile's pins, read as text (the image itself is built and run by scripts/image.sh,
// from .ci/run, never inside pnpm test): its base is a build argument whose default is fully
// qualified and pinned by digest, its version label is the package's, it runs as uid 10001.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import pkg from '../../package.json' with { type: 'json' }
import { ROOT } from '../support/run-verify.ts'

const text = readFileSync(join(ROOT, 'Containerfile'), 'utf8')

test('BASE_IMAGE: a registry, a repository and a sha256 digest; every stage is built FROM it', () => {
  const base = /^ARG BASE_IMAGE=(\S+)$/m.exec(text)?.[1]
  expect(base).toMatch(/^[a-z0-9.-]+\.[a-z]+\/[a-z0-9._/-]+:[\w.-]+@sha256:[0-9a-f]{64}$/)
  expect(text.match(/^FROM .*/gm)).toEqual([`FROM \${BASE_IMAGE} AS build`, `FROM \${BASE_IMAGE}`])
})

test("the OCI labels say the package's version; the user is 10001, the workdir /runs, the entrypoint armproof", () => {
  expect(/^ARG VERSION=(\S+)$/m.exec(text)?.[1]).toBe(pkg.version)
  for (const label of ['title', 'description', 'version', 'base.name']) expect(text).toContain(`org.opencontainers.image.${label}=`)
  expect(text).toMatch(/^USER 10001:10001$/m)
  expect(text).toMatch(/^WORKDIR \/runs$/m)
  expect(text).toMatch(/^ENTRYPOINT \["armproof"\]$/m)
})
