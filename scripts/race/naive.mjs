// The race tests' control: the path-based executor (pinnedfs/fallback's PathAtomicFileSystem,
// "lstat every component, then use the path"), given PinnedRoot's method names. It refuses a link
// or a hard-linked file it sees, exactly like pinnedfs, but checks one lookup of a name and then
// acts on another, so a swap between the two carries it out of the root. Every cell of test/race
// runs it beside pinnedfs, under the same attacker and the same detectors, and requires it to
// escape: that is what shows the cell can see an escape at all.
//
// The executor is passed in (`make`), so the same adapter serves the tests (the TypeScript source)
// and `npm run stress` (the built dist/). `window`, when given, is the executor's test seam: awaited
// between the check and the use of every operation, which is how the harness makes the swap land
// inside that window on demand instead of waiting for the race to find it (the forced exposure of
// test/race). Without it the executor runs at full speed.
import { Effect, Option, Result } from "effect"
import * as path from "node:path"

/**
 * @param {string} root
 * @param {{ make: (window?: () => Promise<void>) => any, window?: () => Promise<void> }} options
 *   make: builds the executor, with the window in its check-then-use gap when one is given.
 */
export const openPathBased = async (root, { make, window }) => {
  // The directory programs are composed from single operations below, and only their last step
  // is the use the window belongs to: the steps before it are checks, run with the window shut.
  let shut = false
  const ext = make(window === undefined ? undefined : async () => (shut ? undefined : window()))
  const rootIdentity = await Effect.runPromise(ext.identifyRoot(root))
  const triple = { boundaryRoot: root, logicalRoot: root, rootIdentity }
  const abs = (rel) => (rel === "" ? root : path.join(root, rel))
  const run = (request) => Effect.runPromise(ext.execute({ ...triple, ...request }))
  const checking = async (step) => {
    shut = true
    try {
      return await step()
    } finally {
      shut = false
    }
  }
  // Effect's File.Info carries the inode in an Option; the harness compares "dev:ino".
  const info = (i) => ({ ...i, ino: Option.getOrUndefined(i.ino) })
  const identity = (i) => `${i.dev}:${Option.getOrThrow(i.ino)}`
  const target = {
    exists: (p) => run({ operation: "exists", path: abs(p) }),
    stat: async (p) => info(await run({ operation: "stat", path: abs(p) })),
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
    // The kernel sends an absolute pattern and the root it was resolved from; the answers are
    // absolute, as Effect answers an absolute pattern ("dir/**" naming "dir" too), and PinnedRoot's
    // are relative to that root, which it does not name.
    glob: async (pattern, options) => {
      const base = abs(options?.root ?? "")
      const found = await run({ operation: "glob", pattern: path.join(base, pattern), root: base })
      return found.filter((p) => p !== base).map((p) => path.relative(base, p))
    },
    makeDirectory: (p, options) => run({ operation: "makeDirectory", path: abs(p), options: { recursive: options?.recursive === true } }),
    // The wire's directory programs are the native executor's; path-based code makes each
    // directory, then reads its identity back.
    mkdirs: async (plan) => {
      const created = []
      for (const d of plan) {
        try {
          await run({ operation: "makeDirectory", path: abs(d.path), options: { mode: d.mode ?? 0o777 } })
        } catch (error) {
          return { created, error }
        }
        created.push({ path: d.path, identity: identity(await checking(() => run({ operation: "stat", path: abs(d.path) }))) })
      }
      return { created, error: null }
    },
    // ...and removes an owned directory once its identity is still the one recorded.
    rmdirs: async (owned) => {
      const members = []
      for (const d of owned) {
        try {
          const now = await checking(() => run({ operation: "stat", path: abs(d.path) }))
          if (now.type !== "Directory" || identity(now) !== d.identity) {
            members.push({
              path: d.path,
              status: "refused",
              error: Object.assign(new Error(`identity: ${d.path}`), { refusal: "identity" })
            })
            continue
          }
          await run({ operation: "remove", path: abs(d.path), options: { recursive: true } })
          members.push({ path: d.path, status: "removed", error: null })
        } catch (error) {
          members.push({ path: d.path, status: "refused", error })
        }
      }
      return { members, stopped: false }
    },
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
      return answer.entries.map((e) => {
        if (!Result.isSuccess(e.result)) return { ok: false, error: e.result.failure }
        const { operation, value } = e.result.success
        return { ok: true, value: operation === "stat" ? info(value) : value }
      })
    }
  }
  return target
}
