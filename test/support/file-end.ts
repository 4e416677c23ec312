/**
 * Clean-ups that support modules need after every test, or at the end of every test file.
 *
 * A support module cannot register `afterEach`/`afterAll` when it is imported: where vitest runs
 * several files in one process (`isolate: false`, vitest.config.ts), a module is imported once, and
 * its hooks would belong to the first file alone. It hands its clean-up here instead, and
 * test/support/per-file.ts (a setup file, run before every file) registers the hooks that call
 * them, in every file. Each clean-up must do nothing when there is nothing to clean.
 */
const atTestEnd = new Set<() => void>()
const atFileEnd = new Set<() => void>()

/** After every test of every file from now on. */
export const onTestEnd = (clean: () => void): void => {
  atTestEnd.add(clean)
}

/** At the end of every file from now on. */
export const onFileEnd = (clean: () => void): void => {
  atFileEnd.add(clean)
}

/** @internal For per-file.ts. */
export const runTestEnd = (): void => {
  for (const clean of atTestEnd) clean()
}

/** @internal For per-file.ts. */
export const runFileEnd = (): void => {
  for (const clean of atFileEnd) clean()
}
