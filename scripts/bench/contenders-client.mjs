// Two Effect contenders that are not pinnedfs's own, so that the kernels are compared with what a
// user would otherwise run:
// - Effect's plain `NodeFileSystem` with no kernel at all: the unguarded speed the client's
//   program gives up by going through a permission kernel;
// - the client's own kernel (its `FileSystem.ts`) over `NodeAtomicFileSystem.layer`: what a client
//   switching executors, not kernels, gets.
//
// The client's kernel is not part of this repository: the bench takes the document that carries it
// (a unified diff adding `package/src/FileSystem.ts`) from `--client-kernel FILE` or
// PINNEDFS_CLIENT_KERNEL, lifts the module out, strips its types with TypeScript and loads it from
// a temporary directory, removed as soon as it is loaded. Its few imports from its own package
// (the grant store, the workspace, the batch service, the permission errors) are answered by
// pinnedfs/kernel's modules of the same contract; nothing of the client's is kept. Without the
// document the contender is not made and the goal table says "not measured".
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { grantedKernel } from "./contenders-effect.mjs"

const dist = new URL("../../dist/", import.meta.url)
const load = (rel) => import(new URL(rel, dist).href)

/**
 * Where the client's kernel document is, when given. An argument is also put in the environment,
 * so that the children the bench starts (the strace counts) make the same contender.
 */
export const clientKernelDocument = () => {
  const argv = process.argv
  const at = argv.indexOf("--client-kernel")
  const file = at >= 0 ? argv[at + 1] : process.env.PINNEDFS_CLIENT_KERNEL
  if (file === undefined || file === "") return undefined
  process.env.PINNEDFS_CLIENT_KERNEL = path.resolve(file)
  return process.env.PINNEDFS_CLIENT_KERNEL
}

/** The added lines of the hunk that creates `src/FileSystem.ts`, as a module's text. */
const liftModule = (text) => {
  const lines = text.split("\n")
  const header = lines.findIndex((l) => /(^|\/)src\/FileSystem\.ts\s*$/.test(l))
  if (header < 0) throw new Error("the client kernel document has no src/FileSystem.ts")
  const hunk = lines.findIndex((l, i) => i > header && l.startsWith("@@"))
  if (hunk < 0) throw new Error("the client kernel document's src/FileSystem.ts has no hunk")
  const out = []
  for (let i = hunk + 1; i < lines.length && (lines[i].startsWith("+") || lines[i] === ""); i++) out.push(lines[i].slice(1))
  return out.join("\n")
}

// The client package's own modules, each answered by the pinnedfs/kernel module of the same
// contract (the same service tags, so the layers given to both kernels are the same).
const shims = (kernelDir) => {
  const at = (f) => JSON.stringify(new URL(f, kernelDir).href)
  return {
    "permission.mjs": [
      `import { PermissionDenied, toPlatformError } from ${at("Permission.js")}`,
      "export { toPlatformError }",
      "export const permissionDenied = (capability, reason) => new PermissionDenied({ capability, reason })"
    ].join("\n"),
    "capability.mjs": [
      `import { Effect } from ${JSON.stringify(import.meta.resolve("effect"))}`,
      "export const makeCapability = (action, resource) => Effect.succeed({ action, resource })"
    ].join("\n"),
    // The client's batch module also names its size bound and its fallback concurrency; the bench's
    // rows never batch through the client's kernel, so any sound values do.
    "batch.mjs": [
      `export * from ${at("FileSystemBatch.js")}`,
      "export const maxBatchSize = 4096",
      "export const fallbackConcurrency = 16"
    ].join("\n"),
    "grants.mjs": `export * from ${at("GrantStore.js")}`,
    // The Effect the client wrote against named its base64 module Encoding; this one ships it as
    // effect/encoding's Base64, with the same shapes (a string; a Result of the bytes).
    "effect.mjs": [
      `export * from ${JSON.stringify(import.meta.resolve("effect"))}`,
      `import { Base64 } from ${JSON.stringify(import.meta.resolve("effect/encoding"))}`,
      "export const Encoding = { encodeBase64: Base64.encode, decodeBase64: Base64.decode }"
    ].join("\n"),
    "workspace.mjs": `export * from ${at("Workspace.js")}`
  }
}

const specifiers = {
  effect: "./effect.mjs",
  "@smthrs/capability/Permission": "./permission.mjs",
  "./internal/makeCapability.ts": "./capability.mjs",
  "./FileSystemBatch.ts": "./batch.mjs",
  "./GrantStore.ts": "./grants.mjs",
  "./Workspace.ts": "./workspace.mjs"
}

/** The client's kernel module, loaded: its `layer` among its exports. */
export const loadClientKernel = async (document) => {
  const ts = createRequire(import.meta.url)("typescript")
  const source = liftModule(fs.readFileSync(document, "utf8"))
  let js = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false },
    fileName: "FileSystem.ts"
  }).outputText
  js = js.replace(/from\s+"([^"]+)"/g, (_whole, spec) => {
    if (spec in specifiers) return `from "${specifiers[spec]}"`
    if (spec.startsWith(".")) throw new Error(`the client kernel imports ${spec}, which the bench does not provide`)
    return `from ${JSON.stringify(import.meta.resolve(spec))}`
  })
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-client-kernel-"))
  try {
    for (const [name, text] of Object.entries(shims(new URL("kernel/", dist)))) fs.writeFileSync(path.join(dir, name), text)
    fs.writeFileSync(path.join(dir, "FileSystem.mjs"), js)
    return await import(pathToFileURL(path.join(dir, "FileSystem.mjs")).href)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** The operations of a contender over one Effect `FileSystem` service, each a run of its runtime. */
const fileSystemContender = (name, strategy, rt, fsService, root, extra = {}) => {
  const run = (e) => rt.runPromise(e)
  const abs = (rel) => path.join(root, rel)
  return {
    name,
    strategy,
    readFile: (rel) => run(fsService.readFile(abs(rel))),
    readFileString: (rel) => run(fsService.readFileString(abs(rel))),
    stat: (rel) => run(fsService.stat(abs(rel))),
    exists: (rel) => run(fsService.exists(abs(rel))),
    close: () => rt.dispose(),
    ...extra
  }
}

const serviceOf = async (rt) => {
  const { Effect, FileSystem } = await import("effect")
  return rt.runPromise(
    Effect.gen(function* () {
      return yield* FileSystem.FileSystem
    })
  )
}

/** Effect's own Node file system, no kernel, no extension. */
export const plainEffect = async (root) => {
  const { ManagedRuntime } = await import("effect")
  const NodeFileSystem = await import("@effect/platform-node/NodeFileSystem")
  const rt = ManagedRuntime.make(NodeFileSystem.layer)
  return fileSystemContender("Effect NodeFileSystem", "-", rt, await serviceOf(rt), root)
}

/** The client's kernel over `NodeAtomicFileSystem`, every read and write granted by a rule store. */
export const clientKernelOver = async (root, strategy) => {
  const document = clientKernelDocument()
  if (document === undefined) {
    // Not a failure of the bench: the run simply has no such contender (bench.mjs notes it).
    throw Object.assign(new Error("not measured: no --client-kernel FILE (or PINNEDFS_CLIENT_KERNEL) given"), { notMeasured: true })
  }
  const client = await loadClientKernel(document)
  const { ManagedRuntime } = await import("effect")
  const { NodeAtomicFileSystem } = await load("effect/index.js")
  const rt = ManagedRuntime.make(await grantedKernel(client.layer, NodeAtomicFileSystem.layerWith({ strategy }), root))
  return fileSystemContender("client kernel over NodeAtomicFileSystem", strategy, rt, await serviceOf(rt), root)
}
