// node scripts/bench/kernel-cost.mjs [--rounds N]
//
// The JavaScript a permission kernel spends per operation, with the file system taken out: both
// kernels (pinnedfs/kernel, and the client's own when --client-kernel FILE is given) over an
// executor that answers every request at once from memory (a `resolve` that met no link, a `stat`
// of a regular file, a read of 4 KiB, `exists` true), and Effect's plain NodeFileSystem's
// answer-at-once equivalent (a `FileSystem.make` whose methods succeed at once) beside them. What
// is left is path arithmetic, the grant decision, the Effect program and its run: the part of a
// kernel's cost no faster trip can remove. CPU µs per operation, medians of interleaved rounds.
import { measureSideBySide } from "./measure.mjs"
import { clientKernelDocument, loadClientKernel } from "./contenders-client.mjs"

const argv = process.argv.slice(2)
const roundsAt = argv.indexOf("--rounds")
const rounds = roundsAt >= 0 ? Number(argv[roundsAt + 1]) : 7
const dist = new URL("../../dist/", import.meta.url)
const { Effect, FileSystem, Layer, ManagedRuntime } = await import("effect")
const NodePath = await import("@effect/platform-node/NodePath")
const { GrantStore, KernelFileSystem, Workspace } = await import(new URL("kernel/index.js", dist).href)
const { withAtomicFileSystem } = await import(new URL("protocol/wire.js", dist).href)

const root = "/bench/workspace"
const file = `${root}/a/b/c/d/e/f/g/file.txt`
const text = "a".repeat(4096)
const info = {
  type: "File",
  mtime: { _tag: "None" },
  atime: { _tag: "None" },
  birthtime: { _tag: "None" },
  dev: 1,
  ino: { _tag: "None" },
  mode: 0o644,
  nlink: { _tag: "Some", value: 1 },
  uid: { _tag: "None" },
  gid: { _tag: "None" },
  rdev: { _tag: "None" },
  size: 4096n,
  blksize: { _tag: "None" },
  blocks: { _tag: "None" }
}
// Answers as the native extension would on a quiet tree with no link in it.
const answers = {
  resolve: (r) => ({ path: r.path, target: null }),
  stat: () => info,
  exists: () => true,
  readFileString: () => text,
  readFile: () => new Uint8Array(4096),
  realPath: (r) => r.path
}
const atomic = {
  noFollowAuthorization: true,
  batchLimits: { size: 256, response: 1 << 24 },
  contentLimit: 1 << 24,
  identifyRoot: () => Effect.succeed("1:1"),
  execute: (request) => Effect.sync(() => answers[request.operation](request))
}
// A partial host: only what the measured calls reach (readFileString among them, which make's own
// type leaves out because make derives it when it is absent).
const host = FileSystem.make(
  /** @type {any} */ ({
    realPath: (p) => Effect.succeed(p),
    stat: () => Effect.succeed(/** @type {any} */ (info)),
    access: () => Effect.void,
    readFileString: () => Effect.succeed(text),
    readFile: () => Effect.succeed(new Uint8Array(4096))
  })
)
const hostLayer = Layer.succeed(FileSystem.FileSystem, withAtomicFileSystem({ ...host }, atomic))
const over = (kernelLayer) =>
  kernelLayer.pipe(
    Layer.provide(
      Layer.mergeAll(hostLayer, Workspace.layer(root), GrantStore.layerRules({ root, allow: [{ action: "fs:read", glob: "**" }] }))
    ),
    Layer.provideMerge(NodePath.layer)
  )

/** @type {Array<[string, any]>} */
const contenders = [["plain FileSystem (answers at once)", hostLayer]]
contenders.push(["pinnedfs/kernel", over(KernelFileSystem.layer)])
const document = clientKernelDocument()
if (document !== undefined) contenders.push(["client kernel", over((await loadClientKernel(document)).layer)])

const made = []
for (const [name, layer] of contenders) {
  const rt = ManagedRuntime.make(layer)
  const fs = await rt.runPromise(Effect.service(FileSystem.FileSystem))
  made.push({ name, rt, fs })
}
/** @type {Array<[string, (fs: any) => any]>} */
const calls = [
  ["stat", (fs) => fs.stat(`${root}/file.txt`)],
  ["exists", (fs) => fs.exists(`${root}/file.txt`)],
  ["readFileString, depth 8", (fs) => fs.readFileString(file)]
]
for (const [op, call] of calls) {
  const results = await measureSideBySide(
    made.map(({ rt, fs }) => ({ unit: () => rt.runPromise(call(fs)) })),
    { rounds, minMs: 300, warmupMs: 1500 }
  )
  console.log(`${op}: CPU µs/op (median of ${rounds} rounds)`)
  made.forEach(({ name }, i) => {
    const r = results[i]
    console.log(`  ${name.padEnd(36)} ${r.error ? `failed: ${r.error.message}` : r.cpuUsPerOp.toFixed(2)}`)
  })
}
for (const { rt } of made) await rt.dispose()
