// What `npm run stress` attacks: PinnedRoot under each strategy, and the path-based fallback
// (through the same adapter as the race tests' control, with no window).
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { openPathBased } from "./naive.mjs"

export const raceTargets = async (repo) => {
  const { PinnedRoot } = await import(pathToFileURL(path.join(repo, "dist/index.js")).href)
  const targets = ["openat2", "walk"].map((strategy) => ({
    name: `PinnedRoot (${strategy})`,
    open: async (root) => {
      const pinned = await PinnedRoot.open(root, { strategy })
      if (pinned.strategy !== strategy) throw new Error(`asked for ${strategy}, got ${pinned.strategy}`)
      return pinned
    }
  }))
  const { PathAtomicFileSystem } = await import(pathToFileURL(path.join(repo, "dist/fallback/index.js")).href)
  targets.push({ name: "PathAtomicFileSystem", open: (root) => openPathBased(root, { make: () => PathAtomicFileSystem.make() }) })
  return targets
}
