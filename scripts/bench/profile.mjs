// node [--cpu-prof] scripts/bench/profile.mjs OP awaited|flight [count]
//
// One contender doing one operation `count` times, awaited or 256 in flight, for a CPU profile
// (node --cpu-prof) of where its time goes. OP is one of: node, pr, ext, proto, kernel (reading the
// depth-8 file: node:fs/promises, PinnedRoot, the extension's execute readFile (ext-stamped: the
// request spread from two objects, as the client's kernel makes it; ext-assigned: Object.assign), the client protocol
// of resolve, resolve, read through execute, the kernel's readFileString over the extension with
// every read granted); node-stat, pr-stat, ext-stat, kernel-stat, node-exists, ext-exists, kernel-exists
// (the depth-1 file); ext-batch, kernel-batch (256 reads in one batch, counted as 256);
// ext-readdir, kernel-readdir (a directory of 1,000 entries, with every read granted).
import * as fsp from "node:fs/promises"
import * as path from "node:path"
const { Effect } = await import("effect")
const repo = new URL("../..", import.meta.url).pathname
const { makeTrees, DEEP, SHALLOW } = await import(`${repo}/scripts/bench/trees.mjs`)
const { PinnedRoot } = await import(`${repo}/dist/index.js`)
const { NodeAtomicFileSystem } = await import(`${repo}/dist/effect/index.js`)
const trees = makeTrees({ globFiles: 0, dirEntries: 1_000, removeFiles: 0 })
const root = trees.root
const pr = await PinnedRoot.open(root, { strategy: "openat2" })
const ext = NodeAtomicFileSystem.make({ strategy: "openat2" })
const identity = await Effect.runPromise(ext.identifyRoot(root))
const stamp = { boundaryRoot: root, logicalRoot: root, rootIdentity: identity }
const abs = path.join(root, DEEP)
const kernel = await (async () => {
  const { FileSystem, Layer, ManagedRuntime } = await import("effect")
  const NodePath = await import("@effect/platform-node/NodePath")
  const { FileSystemBatch, GrantStore, KernelFileSystem, Workspace } = await import(`${repo}/dist/kernel/index.js`)
  const layer = KernelFileSystem.layer.pipe(
    Layer.provide(
      Layer.mergeAll(
        NodeAtomicFileSystem.layerWith({ strategy: "openat2" }),
        Workspace.layer(root),
        GrantStore.layerRules({ root, allow: [{ action: "fs:read", glob: "**" }] })
      )
    ),
    Layer.provideMerge(NodePath.layer)
  )
  const rt = ManagedRuntime.make(layer)
  const fs = await rt.runPromise(
    Effect.gen(function* () {
      return yield* FileSystem.FileSystem
    })
  )
  return { rt, fs, batch: FileSystemBatch.fromFileSystem(fs) }
})()
const shallow = path.join(root, SHALLOW)
const many = Array.from({ length: 256 }, (_, i) => path.join(root, `many/f${String(i).padStart(3, "0")}.txt`))
const which = process.argv[2]
const mode = process.argv[3] ?? "awaited"
const perCall = which.endsWith("-batch") ? 256 : 1
const N = Math.ceil(Number(process.argv[4] ?? 40000) / perCall)
const ops = {
  ext: () => Effect.runPromise(ext.execute({ operation: "readFile", path: abs, ...stamp })),
  // The request built as the client's kernel builds it, its own fields spread, then the root's.
  "ext-stamped": () => Effect.runPromise(ext.execute({ ...{ operation: "readFile", path: abs }, ...stamp })),
  "ext-assigned": () => Effect.runPromise(ext.execute(Object.assign({ operation: "readFile", path: abs }, stamp))),
  pr: () => pr.readFile(DEEP),
  node: () => fsp.readFile(abs),
  kernel: () => kernel.rt.runPromise(kernel.fs.readFileString(abs)),
  "node-stat": () => fsp.lstat(shallow),
  "ext-stat": () => Effect.runPromise(ext.execute({ operation: "stat", path: shallow, ...stamp })),
  "kernel-stat": () => kernel.rt.runPromise(kernel.fs.stat(shallow)),
  "node-exists": () => fsp.access(shallow),
  "ext-exists": () => Effect.runPromise(ext.execute({ operation: "exists", path: shallow, ...stamp })),
  "kernel-exists": () => kernel.rt.runPromise(kernel.fs.exists(shallow)),
  "ext-batch": () =>
    Effect.runPromise(ext.execute({ operation: "batch", requests: many.map((p) => ({ operation: "readFile", path: p })), ...stamp })),
  "ext-readdir": () => Effect.runPromise(ext.execute({ operation: "readDirectory", path: path.join(root, "list"), ...stamp })),
  "kernel-readdir": () => kernel.rt.runPromise(kernel.fs.readDirectory(path.join(root, "list"))),
  "kernel-batch": () => kernel.rt.runPromise(kernel.batch.execute(many.map((p) => ({ operation: "readFile", path: p })))),
  "pr-stat": () => pr.stat(SHALLOW),
  proto: () =>
    Effect.runPromise(
      ext
        .execute({ operation: "resolve", path: abs, ...stamp })
        .pipe(
          Effect.andThen(ext.execute({ operation: "resolve", path: abs, ...stamp })),
          Effect.andThen(ext.execute({ operation: "readFile", path: abs, ...stamp }))
        )
    )
}
const op = ops[which]
if (op === undefined) throw new Error(`unknown operation ${which}: one of ${Object.keys(ops).join(", ")}`)
const c0 = process.cpuUsage()
const t0 = performance.now()
if (mode === "awaited") {
  for (let i = 0; i < N; i++) await op()
} else {
  let next = 0
  await Promise.all(
    Array.from({ length: 256 }, async () => {
      while (next++ < N) await op()
    })
  )
}
const ms = performance.now() - t0
const c = process.cpuUsage(c0)
console.log(which, mode, `${((N * perCall) / ms).toFixed(1)} k/s`, `${((c.user + c.system) / (N * perCall)).toFixed(1)} µs CPU/op`)
pr.close()
ext.close()
await kernel.rt.dispose()
trees.cleanup()
