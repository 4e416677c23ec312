/**
 * Every suite runs once per resolve strategy: `describe.each(strategies)`. The kernel strategy is
 * asserted to be what this machine gives (Linux 5.6+ here), so a silent fallback cannot make the
 * "openat2" run a second walk run.
 *
 * Under a kernel without openat2 (test/restricted re-runs suites under a seccomp filter that
 * blocks it, and says so with PINNEDFS_TEST_NO_OPENAT2) the walk is the only strategy there is.
 */
export type TestStrategy = "openat2" | "walk"
export const strategies: ReadonlyArray<TestStrategy> = process.env["PINNEDFS_TEST_NO_OPENAT2"] ? ["walk"] : ["openat2", "walk"]
