/**
 * A scratch tree pinned: the set-up most suites of the promise API start each test from, under the
 * strategy the suite runs, which this machine must really give (no silent fallback to the walk).
 */
import { expect } from "vitest"
import { PinnedRoot } from "../../src/index.ts"
import type { TestStrategy } from "./strategies.ts"
import { type Scratch, scratch } from "./tree.ts"

/** A fresh scratch, made by `build`, and a root pinned on it under `strategy`. */
export const pinnedScratch = async (strategy: TestStrategy, build: (s: Scratch) => void): Promise<{ s: Scratch; root: PinnedRoot }> => {
  const s = scratch()
  build(s)
  const root = await PinnedRoot.open(s.root, { strategy })
  expect(root.strategy).toBe(strategy)
  return { s, root }
}
