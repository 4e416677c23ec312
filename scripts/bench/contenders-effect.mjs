// The Effect-side contenders: the atomic extensions driven through `execute` with real wire
// requests (what a kernel sends), and the permission kernel over each, driven through the guarded
// `FileSystem` service a program uses. Same operations as contenders.mjs.
import * as path from "node:path"

const dist = new URL("../../dist/", import.meta.url)
const load = (rel) => import(new URL(rel, dist).href)

/** An extension (`NodeAtomicFileSystem.make(...)` or `PathAtomicFileSystem.make()`) as a contender. */
export const extensionContender = async (name, strategy, ext, root) => {
  const { Effect } = await import("effect")
  const identity = await Effect.runPromise(ext.identifyRoot(root))
  const stamp = { boundaryRoot: root, logicalRoot: root, rootIdentity: identity }
  const run = (request) => Effect.runPromise(ext.execute({ ...request, ...stamp }))
  const abs = (rel) => path.join(root, rel)
  return {
    name,
    strategy,
    readFile: (rel) => run({ operation: "readFile", path: abs(rel) }),
    stat: (rel) => run({ operation: "stat", path: abs(rel) }),
    writeFile: (rel, data) => run({ operation: "writeFile", path: abs(rel), data: Buffer.from(data).toString("base64") }),
    readDirectory: (rel) => run({ operation: "readDirectory", path: abs(rel) }),
    glob: (pattern, rel) => run({ operation: "glob", pattern: path.join(abs(rel), pattern), root: abs(rel) }),
    batch: async (rels) => {
      const out = await run({ operation: "batch", requests: rels.map((p) => ({ operation: "readFile", path: abs(p) })) })
      for (const e of out.entries) if (e.result._tag !== "Success") throw new Error(`batch member ${e.path} failed`)
      return out
    },
    mkdirp: (rel) => run({ operation: "makeDirectory", path: abs(rel), options: { recursive: true } }),
    removeTree: (rel) => run({ operation: "remove", path: abs(rel), options: { recursive: true } }),
    close: () => ext.close?.()
  }
}

export const nativeExtension = async (root, strategy) => {
  const { NodeAtomicFileSystem } = await load("effect/index.js")
  return extensionContender("NodeAtomicFileSystem", strategy, NodeAtomicFileSystem.make({ strategy }), root)
}

export const fallbackExtension = async (root) => {
  const { PathAtomicFileSystem } = await load("fallback/index.js")
  return extensionContender("PathAtomicFileSystem", "-", PathAtomicFileSystem.make(), root)
}

/** The guarded FileSystem of `pinnedfs/kernel` over a host layer, with every read and write granted. */
export const kernelOver = async (root, hostName, strategy) => {
  const { Effect, FileSystem, Layer, ManagedRuntime } = await import("effect")
  const NodePath = await import("@effect/platform-node/NodePath")
  const { GrantStore, KernelFileSystem, Workspace, FileSystemBatch } = await load("kernel/index.js")
  const host = hostName === "pinnedfs"
    ? (await load("effect/index.js")).NodeAtomicFileSystem.layerWith({ strategy })
    : (await load("fallback/index.js")).PathAtomicFileSystem.layer
  const kernel = KernelFileSystem.layer.pipe(
    Layer.provide(Layer.mergeAll(
      host,
      Workspace.layer(root),
      GrantStore.layerRules({ root, allow: [{ action: "fs:read", glob: "**" }, { action: "fs:write", glob: "**" }] })
    )),
    Layer.provideMerge(NodePath.layer)
  )
  const rt = ManagedRuntime.make(kernel)
  const fs = await rt.runPromise(Effect.gen(function*() { return yield* FileSystem.FileSystem }))
  const batch = FileSystemBatch.fromFileSystem(fs)
  const run = (e) => rt.runPromise(e)
  const abs = (rel) => path.join(root, rel)
  return {
    name: `kernel over ${hostName === "pinnedfs" ? "NodeAtomicFileSystem" : "PathAtomicFileSystem"}`,
    strategy: hostName === "pinnedfs" ? strategy : "-",
    readFile: (rel) => run(fs.readFile(abs(rel))),
    stat: (rel) => run(fs.stat(abs(rel))),
    writeFile: (rel, data) => run(fs.writeFile(abs(rel), data)),
    readDirectory: (rel) => run(fs.readDirectory(abs(rel))),
    glob: (pattern, rel) => run(fs.glob(pattern, { root: abs(rel) })),
    ...(batch === undefined ? {} : {
      batch: async (rels) => {
        const out = await run(batch.execute(rels.map((p) => ({ operation: "readFile", path: abs(p) }))))
        for (const e of out.entries) if (e.result._tag !== "Success") throw new Error(`batch member ${e.path} failed`)
        return out
      }
    }),
    mkdirp: (rel) => run(fs.makeDirectory(abs(rel), { recursive: true })),
    removeTree: (rel) => run(fs.remove(abs(rel), { recursive: true })),
    close: () => rt.dispose()
  }
}
