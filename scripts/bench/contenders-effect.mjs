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
  // As the client's kernel stamps each request: the request's own fields, then the root triple.
  /** @type {(request: object) => import("effect").Effect.Effect<any, any, never>} */
  const pinned = (request) => ext.execute({ ...request, ...stamp })
  const run = (request) => Effect.runPromise(pinned(request))
  const abs = (rel) => path.join(root, rel)
  // A read as the client's kernel issues it through `execute` (its atomicOne path): `resolve` the
  // path before the grant decision, `resolve` it again after (the answer must be the same), then
  // the read itself, each a separate request, composed in one Effect and run once. The grant store
  // is left out (it is the kernel's, not the extension's); the second resolve is compared with the
  // first, as the kernel does.
  const protocolRead = (rel) => {
    const target = abs(rel)
    const resolve = Effect.flatMap(pinned({ operation: "resolve", path: target }), (r) =>
      r.target === null ? Effect.succeed(r.path) : Effect.die(new Error(`unexpected link at ${r.path}`))
    )
    return Effect.runPromise(
      Effect.flatMap(resolve, (first) =>
        Effect.flatMap(resolve, (second) =>
          second === first ? pinned({ operation: "readFile", path: target }) : Effect.die(new Error("moved"))
        )
      )
    )
  }
  return {
    name,
    strategy,
    readFile: (rel) => run({ operation: "readFile", path: abs(rel) }),
    protocolRead,
    stat: (rel) => run({ operation: "stat", path: abs(rel) }),
    exists: (rel) => run({ operation: "exists", path: abs(rel) }),
    // Every whole-file write of an extension replaces the file through a temporary: crash-safe.
    writeFile: (rel, data) => run({ operation: "writeFile", path: abs(rel), data: Buffer.from(data).toString("base64") }),
    writeFileReplace: (rel, data) => run({ operation: "writeFile", path: abs(rel), data: Buffer.from(data).toString("base64") }),
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

/**
 * A kernel's layer (pinnedfs/kernel's, or the client's) over a host layer, its workspace the bench
 * tree and every read and write granted by a rule store: the same composition for every kernel.
 */
export const grantedKernel = async (kernelLayer, host, root) => {
  const { Layer } = await import("effect")
  const NodePath = await import("@effect/platform-node/NodePath")
  const { GrantStore, Workspace } = await load("kernel/index.js")
  return kernelLayer.pipe(
    Layer.provide(
      Layer.mergeAll(
        host,
        Workspace.layer(root),
        GrantStore.layerRules({
          root,
          allow: [
            { action: "fs:read", glob: "**" },
            { action: "fs:write", glob: "**" }
          ]
        })
      )
    ),
    Layer.provideMerge(NodePath.layer)
  )
}

/** The guarded FileSystem of `pinnedfs/kernel` over a host layer, with every read and write granted. */
export const kernelOver = async (root, hostName, strategy) => {
  const { Effect, FileSystem, ManagedRuntime } = await import("effect")
  const { KernelFileSystem, FileSystemBatch } = await load("kernel/index.js")
  const host =
    hostName === "pinnedfs"
      ? (await load("effect/index.js")).NodeAtomicFileSystem.layerWith({ strategy })
      : (await load("fallback/index.js")).PathAtomicFileSystem.layer
  const rt = ManagedRuntime.make(await grantedKernel(KernelFileSystem.layer, host, root))
  const fs = await rt.runPromise(
    Effect.gen(function* () {
      return yield* FileSystem.FileSystem
    })
  )
  const batch = FileSystemBatch.fromFileSystem(fs)
  const run = (e) => rt.runPromise(e)
  const abs = (rel) => path.join(root, rel)
  return {
    name: `kernel over ${hostName === "pinnedfs" ? "NodeAtomicFileSystem" : "PathAtomicFileSystem"}`,
    strategy: hostName === "pinnedfs" ? strategy : "-",
    readFile: (rel) => run(fs.readFile(abs(rel))),
    readFileString: (rel) => run(fs.readFileString(abs(rel))),
    stat: (rel) => run(fs.stat(abs(rel))),
    exists: (rel) => run(fs.exists(abs(rel))),
    writeFile: (rel, data) => run(fs.writeFile(abs(rel), data)),
    writeFileReplace: (rel, data) => run(fs.writeFile(abs(rel), data)),
    readDirectory: (rel) => run(fs.readDirectory(abs(rel))),
    glob: (pattern, rel) => run(fs.glob(pattern, { root: abs(rel) })),
    ...(batch === undefined
      ? {}
      : {
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
