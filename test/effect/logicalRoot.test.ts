/**
 * The root triple's two spellings must name one directory. A request locates each absolute path
 * under `logicalRoot` or `boundaryRoot` by prefix, then resolves it beneath the handle pinned at
 * `boundaryRoot`; a `logicalRoot` that names another directory once had an outside path answered
 * with an unrelated inside file, and a write meant for the outside land inside. Now the worker
 * checks the logical spelling's identity with the boundary root's, on every request, in the same
 * trip: a triple whose roots disagree is refused as `Busy` (`workspace_identity_changed`, the
 * kernel's signal to re-identify its workspace), whichever spelling the paths use, through
 * `execute`, a readMany-backed batch and a general batch.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { NodeAtomicFileSystem } from "../../src/effect/index.ts"
import { strategies } from "../support/strategies.ts"
import { base64, failure, host, ok, tagOf, workspace } from "./support.ts"

const extensions: Array<{ close: () => void }> = []
afterEach(() => {
  for (const e of extensions.splice(0)) e.close()
})

describe.each(strategies)("logicalRoot checked against the identity (%s)", (strategy) => {
  const setup = () => {
    const w = workspace({ "secret.txt": "INSIDE", "a/f.txt": "f" })
    // Another directory, outside the workspace, with files of the same names.
    const other = path.join(path.dirname(w.s.root), "other")
    fs.mkdirSync(other)
    fs.writeFileSync(path.join(other, "secret.txt"), "OTHER")
    const extension = NodeAtomicFileSystem.make({ strategy })
    extensions.push(extension)
    const h = host(extension)
    const wrong = { boundaryRoot: w.boundaryRoot, logicalRoot: other, rootIdentity: w.rootIdentity }
    const req = (operation: string, fields: Record<string, unknown>) => ({ operation, ...wrong, ...fields })
    return { w, other, h, req }
  }

  const expectRefused = (e: { reason: { _tag: string; description?: string | undefined } }, other: string) => {
    expect(e.reason._tag).toBe("Busy")
    expect(e.reason.description ?? "").toContain("workspace_identity_changed")
    expect((e.reason as { pathOrDescriptor?: unknown }).pathOrDescriptor).toBe(other)
  }

  it("refuses execute reads and writes whose logicalRoot names another directory", async () => {
    const { w, other, h, req } = setup()
    expectRefused(await failure(h, req("readFileString", { path: `${other}/secret.txt` })), other)
    expectRefused(await failure(h, req("stat", { path: `${other}/secret.txt` })), other)
    expectRefused(await failure(h, req("writeFileString", { path: `${other}/new.txt`, data: "x" })), other)
    expectRefused(await failure(h, req("writeFile", { path: `${other}/new2.txt`, data: base64("x") })), other)
    expectRefused(await failure(h, req("remove", { path: `${other}/secret.txt` })), other)
    // A path in the boundary spelling is refused as well: the triple itself is inconsistent.
    expectRefused(await failure(h, req("readFileString", { path: `${w.boundaryRoot}/secret.txt` })), other)
    // Nothing was written on either side, nothing removed.
    expect(fs.existsSync(w.s.abs("new.txt"))).toBe(false)
    expect(fs.existsSync(w.s.abs("new2.txt"))).toBe(false)
    expect(fs.existsSync(path.join(other, "new.txt"))).toBe(false)
    expect(fs.readFileSync(w.s.abs("secret.txt"), "utf8")).toBe("INSIDE")
    expect(fs.readFileSync(path.join(other, "secret.txt"), "utf8")).toBe("OTHER")
  })

  it("refuses a readMany-backed batch and a general batch as a whole", async () => {
    const { other, h, req } = setup()
    const reads = [
      { operation: "readFileString", path: `${other}/secret.txt` },
      { operation: "exists", path: `${other}/a` }
    ]
    expectRefused(await failure(h, req("batch", { requests: reads })), other)
    const withGlob = [...reads, { operation: "glob", path: `${other}/*.txt`, root: other }]
    expectRefused(await failure(h, req("batch", { requests: withGlob })), other)
    // A batch with nothing runnable still vouches for its roots.
    expectRefused(await failure(h, req("batch", { requests: [{ operation: "nope" }] })), other)
  })

  it("re-checks on every request: a logical link re-pointed after use is refused from then on", async () => {
    const { w, other, h } = setup()
    // The workspace's logical spelling is a link to it; first used while it is right.
    const good = await ok(h, w.req("readFileString", { path: w.l("secret.txt") }))
    expect(good).toBe("INSIDE")
    const batch = await ok(h, w.req("batch", { requests: [{ operation: "readFileString", path: w.l("secret.txt") }] }))
    expect(batch.entries.map((e: { result: never }) => tagOf(e.result))).toEqual(["ok"])
    fs.unlinkSync(w.logicalRoot)
    fs.symlinkSync(other, w.logicalRoot)
    expectRefused(await failure(h, w.req("readFileString", { path: w.l("secret.txt") })), w.logicalRoot)
    expectRefused(await failure(h, w.req("batch", { requests: [{ operation: "readFileString", path: w.l("secret.txt") }] })), w.logicalRoot)
    expectRefused(await failure(h, w.req("writeFileString", { path: w.l("new.txt"), data: "x" })), w.logicalRoot)
    expect(fs.existsSync(w.s.abs("new.txt"))).toBe(false)
    // Pointed back, the same triple works again: the pinned root was never the problem.
    fs.unlinkSync(w.logicalRoot)
    fs.symlinkSync(w.boundaryRoot, w.logicalRoot)
    expect(await ok(h, w.req("readFileString", { path: w.l("secret.txt") }))).toBe("INSIDE")
  })

  it("refuses a logicalRoot that names nothing", async () => {
    const { w, h } = setup()
    const gone = path.join(path.dirname(w.s.root), "gone")
    const e = await failure(h, {
      operation: "readFileString",
      boundaryRoot: w.boundaryRoot,
      logicalRoot: gone,
      rootIdentity: w.rootIdentity,
      path: `${gone}/secret.txt`
    })
    expectRefused(e, gone)
  })
})
