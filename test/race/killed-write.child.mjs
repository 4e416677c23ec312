// A writer that is killed mid-write (test/race/killed-write.test.ts). It writes versions 1, 2, 3,
// … of one file through one entry, forever, saying "S k" before version k and "D k" once it
// settled. The interposer (native/test/interpose.c, LD_PRELOAD) sends it SIGKILL at the byte or
// system call the test chose, so the test knows the kill fell inside a write and can check what the
// disk holds. Arguments: transpiled-sources-dir entry strategy root relative-path.
//
//   pinned            PinnedRoot.writeFile with no options (the default the README promises)
//   extension         NodeAtomicFileSystem's execute({ operation: "writeFile" }) (base64 payload)
//   extension-string  the same, writeFileString
//   kernel            pinnedfs/kernel's FileSystem.writeFile over the extension (the path every
//                     kernel's write takes: one execute request)
//   fallback          PathAtomicFileSystem's execute({ operation: "writeFile" })
import * as path from "node:path"
import { versionOf } from "./killed-write.versions.mjs"

const [transpiled, entry, strategy, root, rel] = process.argv.slice(2)
const lib = (p) => import(path.join(transpiled, p))
const abs = path.join(root, rel)
const say = (line) => process.stdout.write(`${line}\n`)

// Effect only for the entries that need it: most runs are PinnedRoot's, and importing Effect costs a
// loaded machine most of a second per run.
const viaExtension = async (atomic, operation) => {
  const { Effect } = await import("effect")
  const rootIdentity = await Effect.runPromise(atomic.identifyRoot(root))
  const roots = { boundaryRoot: root, logicalRoot: root, rootIdentity }
  return (k) => {
    const bytes = versionOf(k)
    const data = operation === "writeFile" ? bytes.toString("base64") : bytes.toString("latin1")
    return Effect.runPromise(atomic.execute({ ...roots, operation, path: abs, data, options: { flag: "w" } }))
  }
}

const writers = {
  pinned: async () => {
    const { PinnedRoot } = await lib("index.js")
    const pinned = await PinnedRoot.open(root, { strategy })
    return (k) => pinned.writeFile(rel, versionOf(k))
  },
  extension: async () => viaExtension((await lib("effect/index.js")).NodeAtomicFileSystem.make({ strategy }), "writeFile"),
  "extension-string": async () => viaExtension((await lib("effect/index.js")).NodeAtomicFileSystem.make({ strategy }), "writeFileString"),
  fallback: async () => viaExtension((await lib("fallback/index.js")).PathAtomicFileSystem.make(), "writeFile"),
  kernel: async () => {
    const { Effect, FileSystem, Layer, ManagedRuntime } = await import("effect")
    const { NodeAtomicFileSystem } = await lib("effect/index.js")
    const { GrantStore, KernelFileSystem, Workspace } = await lib("kernel/index.js")
    const NodePath = await import("@effect/platform-node/NodePath")
    const grants = GrantStore.layerRules({ root, allow: [{ action: "fs:write", glob: "**" }] })
    const layer = KernelFileSystem.layer.pipe(
      Layer.provide(Layer.mergeAll(NodeAtomicFileSystem.layerWith({ strategy }), Workspace.layer(root), grants)),
      Layer.provideMerge(NodePath.layer)
    )
    const runtime = ManagedRuntime.make(layer)
    const fs = await runtime.runPromise(Effect.service(FileSystem.FileSystem))
    return (k) => runtime.runPromise(fs.writeFile(abs, versionOf(k)))
  }
}

const write = await writers[entry]()
say("R")
for (let k = 1; ; k++) {
  say(`S ${k}`)
  await write(k)
  say(`D ${k}`)
}
