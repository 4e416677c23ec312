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

// PathAtomicFileSystem speaks the wire contract (absolute paths, the root triple, Effects); this
// gives it PinnedRoot's method names. mkdirs/rmdirs are not part of that contract: answered ENOSYS
// so the stress table shows those cells as not applicable.
const openFallback = async (module, root) => {
  const { Effect, Result } = await import("effect")
  const ext = module.PathAtomicFileSystem.make()
  const rootIdentity = await Effect.runPromise(ext.identifyRoot(root))
  const triple = { boundaryRoot: root, logicalRoot: root, rootIdentity }
  const abs = (rel) => (rel === "" ? root : path.join(root, rel))
  const run = (request) => Effect.runPromise(ext.execute({ ...triple, ...request }))
  const absent = async () => {
    throw Object.assign(new Error("not part of the wire contract"), { code: "ENOSYS" })
  }
  return {
    exists: (p) => run({ operation: "exists", path: abs(p) }),
    stat: (p) => run({ operation: "stat", path: abs(p) }),
    readFile: (p) => run({ operation: "readFile", path: abs(p) }),
    writeFile: (p, data, options) =>
      run({
        operation: "writeFile",
        path: abs(p),
        data: Buffer.from(data).toString("base64"),
        options: { flag: options?.flag ?? "w" }
      }),
    chmod: (p, mode) => run({ operation: "chmod", path: abs(p), options: { mode } }),
    chown: (p, uid, gid) => run({ operation: "chown", path: abs(p), options: { uid, gid } }),
    readDirectory: (p, options) => run({ operation: "readDirectory", path: abs(p), options: { recursive: options?.recursive === true } }),
    // The kernel sends an absolute pattern and the root it was resolved from.
    glob: (pattern, options) =>
      run({ operation: "glob", pattern: path.join(abs(options?.root ?? ""), pattern), root: abs(options?.root ?? "") }),
    makeDirectory: (p, options) => run({ operation: "makeDirectory", path: abs(p), options: { recursive: options?.recursive === true } }),
    mkdirs: absent,
    rmdirs: absent,
    remove: (p, options) =>
      run({ operation: "remove", path: abs(p), options: { recursive: options?.recursive === true, force: options?.force === true } }),
    rename: (from, to) => run({ operation: "rename", from: abs(from), to: abs(to) }),
    batch: async (requests) => {
      const answer = await run({
        operation: "batch",
        requests: requests.map((r) => ({
          operation: r.operation,
          path: abs(r.path),
          ...(r.recursive ? { options: { recursive: true } } : {})
        }))
      })
      return answer.entries.map((e) =>
        Result.isSuccess(e.result) ? { ok: true, value: e.result.success.value } : { ok: false, error: e.result.failure }
      )
    }
  }
}
