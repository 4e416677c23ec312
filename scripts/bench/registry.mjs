// Contenders by name, so the parent and the strace child build the same thing.
import { nodeFs, nodeFsSync, pinnedRoot } from "./contenders.mjs"
import { fallbackExtension, kernelOver, nativeExtension } from "./contenders-effect.mjs"
import { clientKernelOver, plainEffect } from "./contenders-client.mjs"

export const contenderNames = [
  ["node:fs/promises", "-"],
  ["node:fs (sync)", "-"],
  ["PathAtomicFileSystem", "-"],
  ["PinnedRoot", "openat2"],
  ["PinnedRoot", "walk"],
  ["NodeAtomicFileSystem", "openat2"],
  ["NodeAtomicFileSystem", "walk"],
  ["kernel over PathAtomicFileSystem", "-"],
  ["kernel over NodeAtomicFileSystem", "openat2"],
  ["kernel over NodeAtomicFileSystem", "walk"],
  ["Effect NodeFileSystem", "-"],
  ["client kernel over NodeAtomicFileSystem", "openat2"],
  ["client kernel over NodeAtomicFileSystem", "walk"]
]

export const makeContender = async (name, root, strategy) => {
  switch (name) {
    case "node:fs/promises":
      return nodeFs(root)
    case "node:fs (sync)":
      return nodeFsSync(root)
    case "PinnedRoot":
      return pinnedRoot(root, strategy)
    case "NodeAtomicFileSystem":
      return nativeExtension(root, strategy)
    case "PathAtomicFileSystem":
      return fallbackExtension(root)
    case "kernel over NodeAtomicFileSystem":
      return kernelOver(root, "pinnedfs", strategy)
    case "kernel over PathAtomicFileSystem":
      return kernelOver(root, "fallback")
    case "Effect NodeFileSystem":
      return plainEffect(root)
    case "client kernel over NodeAtomicFileSystem":
      return clientKernelOver(root, strategy)
    default:
      throw new Error(`unknown contender ${name}`)
  }
}
