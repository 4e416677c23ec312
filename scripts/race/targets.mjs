// What `npm run stress` attacks: PinnedRoot under each strategy, and the path-based fallback (or,
// until the fallback is built into dist/, the naive stand-in, labelled as such).
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { openNaive } from "./naive.mjs"

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
  const fallbackAt = path.join(repo, "dist/fallback/index.js")
  const fallback = fs.existsSync(fallbackAt) ? await import(pathToFileURL(fallbackAt).href) : undefined
  if (fallback?.PathAtomicFileSystem) {
    targets.push({ name: "PathAtomicFileSystem", open: async (root) => openFallback(fallback, root) })
  } else {
    targets.push({ name: "naive lstat-then-use (stand-in)", open: async (root) => openNaive(root) })
  }
  return targets
}

// Filled in once the fallback's API is on main.
const openFallback = async (_module, _root) => {
  throw new Error("PathAtomicFileSystem adapter not written yet")
}
