// What stays a dependency of the built package (scripts/build.ts bundles the rest into dist/):
// `rolldown`, whose native binding vite instantiates at every dev-server start (vitest starts one),
// and `picomatch`, which vite requires by name at run time. test/repo/package.test.ts checks the
// installed manifest lists exactly these.
export const RUNTIME_DEPENDENCIES = ['rolldown', 'picomatch'] as const
