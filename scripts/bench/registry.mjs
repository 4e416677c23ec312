// Contenders by name, so the parent and the strace child build the same thing.
import { nodeFs, nodeFsSync, pinnedRoot } from "./contenders.mjs"

export const contenderNames = [
  ["node:fs/promises", "-"],
  ["node:fs (sync)", "-"],
  ["PinnedRoot", "openat2"],
  ["PinnedRoot", "walk"]
]

export const makeContender = async (name, root, strategy) => {
  switch (name) {
    case "node:fs/promises":
      return nodeFs(root)
    case "node:fs (sync)":
      return nodeFsSync(root)
    case "PinnedRoot":
      return pinnedRoot(root, strategy)
    default:
      throw new Error(`unknown contender ${name}`)
  }
}
