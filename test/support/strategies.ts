/**
 * Every suite runs once per resolve strategy: `describe.each(strategies)`. The kernel strategy is
 * asserted to be what this machine gives (Linux 5.6+ here), so a silent fallback cannot make the
 * "openat2" run a second walk run.
 */
export const strategies = ["openat2", "walk"] as const
export type TestStrategy = (typeof strategies)[number]
