// What the built package carries beside its bundle (scripts/build.ts bundles the rest into dist/):
// - the dependencies it keeps: `rolldown`, whose native binding vite instantiates at every
//   dev-server start (vitest starts one), and `picomatch`, which vite requires by name at run
//   time. test/repo/package.test.ts checks the installed manifest lists exactly these;
// - the data files of helpers/profiles/ the profile loader reads beside itself
//   (helpers/profiles/load.ts): builtin.json, and the YAML files it is written from (what an
//   operator copies to write a profile of their own). The package `pnpm perf` builds
//   (scripts/perf/fixed-cost.ts) copies the same.
export const RUNTIME_DEPENDENCIES = ['rolldown', 'picomatch'] as const

export const isProfileData = (file: string): boolean => file.endsWith('.yaml') || file === 'builtin.json'
