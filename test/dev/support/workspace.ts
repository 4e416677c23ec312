/**
 * Shared set-up for the dev pipeline tests: a scratch workspace pinned under a given strategy,
 * an open policy, and helpers to read the disk directly (the tests' ground truth, never the code
 * under test).
 */
import * as fs from "node:fs"
import { expect } from "vitest"
import { PinnedRoot } from "../../../src/index.ts"
import { Policy, type Workspace } from "../../../src/dev/index.ts"
import type { TestStrategy } from "../../support/strategies.ts"
import { scratch, type Scratch } from "../../support/tree.ts"

export const openPolicy = Policy.fromRules({ read: ["**"], write: ["**"] })

export const setup = async (strategy: TestStrategy, files: Record<string, string> = {}): Promise<{ s: Scratch; root: PinnedRoot }> => {
  const s = scratch()
  s.make(files)
  const root = await PinnedRoot.open(s.root, { strategy })
  expect(root.strategy).toBe(strategy)
  return { s, root }
}

/** What the disk holds at `rel`, read with plain node:fs (undefined when absent). */
export const disk = (s: Scratch, rel: string): string | undefined => {
  try {
    return fs.readFileSync(s.abs(rel), "utf8")
  } catch {
    return undefined
  }
}

/** Every tracked path's text equals the disk's. */
export const expectDiskEqualsWorkspace = (s: Scratch, ws: Workspace): void => {
  for (const p of ws.paths()) expect([p, disk(s, p)]).toEqual([p, ws.get(p)])
}

export { rejection } from "../../support/rejection.ts"
