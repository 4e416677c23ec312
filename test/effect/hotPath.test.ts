/**
 * The read path's shortcuts answer as the long way did: the root prefix checked in place (no
 * prefix string built), the most recently used root found without building its key, the root
 * identity's pattern run once per identity, and a read decoded and started in one callback. Each
 * shortcut is a place a stranger's path, root or identity could slip through, so each is tried
 * with the inputs the long way refused.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { NodeAtomicFileSystem } from "../../src/effect/index.ts"
import { RootCache } from "../../src/effect/rootCache.ts"
import { locate } from "../../src/effect/roots.ts"
import { strategies } from "../support/strategies.ts"
import { failure, host, ok, refused, rootIdentityOf, workspace } from "./support.ts"

const closers: Array<{ close: () => void }> = []
afterEach(() => {
  for (const c of closers.splice(0)) c.close()
})

describe("locate: the root prefix checked in place", () => {
  const roots = (root: string) => ({ boundaryRoot: root, logicalRoot: root, rootIdentity: "1:2" })

  it("finds a path beneath the root, and the root itself", () => {
    expect(locate(roots("/ws"), "/ws")).toEqual({ relative: "", spelling: "logical" })
    expect(locate(roots("/ws"), "/ws/a/b")).toEqual({ relative: "a/b", spelling: "logical" })
    expect(locate(roots("/ws"), "/ws//a")).toEqual({ relative: "a", spelling: "logical" })
    expect(locate(roots("/ws"), "/ws/")).toEqual({ relative: "", spelling: "logical" })
    expect(locate(roots("/"), "/a")).toEqual({ relative: "a", spelling: "logical" })
    expect(locate(roots("/ws/"), "/ws/a")).toEqual({ relative: "a", spelling: "logical" })
  })

  it("keeps `..` for the native lexer, never cleaned away", () => {
    expect(locate(roots("/ws"), "/ws/../ws/x")).toEqual({ relative: "../ws/x", spelling: "logical" })
  })

  it("refuses a sibling that shares the root's name as a prefix, and a path above it", () => {
    expect(locate(roots("/ws"), "/ws2/a")).toBeUndefined()
    expect(locate(roots("/ws"), "/wsa")).toBeUndefined()
    expect(locate(roots("/ws/"), "/ws")).toBeUndefined()
    expect(locate(roots("/ws"), "/w")).toBeUndefined()
    expect(locate(roots("/ws"), "/")).toBeUndefined()
  })

  it("tries the boundary spelling when the logical one does not hold the path", () => {
    const r = { boundaryRoot: "/real/ws", logicalRoot: "/ws", rootIdentity: "1:2" }
    expect(locate(r, "/real/ws/a")).toEqual({ relative: "a", spelling: "boundary" })
    expect(locate(r, "/real/wsx/a")).toBeUndefined()
  })
})

describe.each(strategies)("the hot path's shortcuts (%s)", (strategy) => {
  it("serves the newest root again, and never an evicted one or another identity's", async () => {
    const w = workspace({ "f.txt": "f" })
    const cache = new RootCache(4, strategy)
    closers.push(cache)
    const first = cache.acquire(w.boundaryRoot, w.rootIdentity)
    const again = cache.acquire(w.boundaryRoot, w.rootIdentity)
    expect(again).toBe(first)
    const other = cache.acquire(w.boundaryRoot, `${w.rootIdentity}0`)
    expect(other).not.toBe(first)
    expect(cache.acquire(w.boundaryRoot, w.rootIdentity)).toBe(first)
    cache.evict(first)
    const fresh = cache.acquire(w.boundaryRoot, w.rootIdentity)
    expect(fresh).not.toBe(first)
    for (const lease of [first, again, other, first, fresh]) cache.release(lease)
    await Promise.allSettled([first.pinned, other.pinned, fresh.pinned])
  })

  it("refuses a malformed identity after a well-formed one was accepted", async () => {
    const w = workspace({ "f.txt": "f" })
    const extension = NodeAtomicFileSystem.make({ strategy })
    closers.push(extension)
    const h = host(extension)
    expect(await ok(h, w.req("exists", { path: w.b("f.txt") }))).toBe(true)
    for (const rootIdentity of [`${w.rootIdentity}x`, "", "1:2:b", `x${w.rootIdentity}`]) {
      const e = await refused(h, { ...w.req("exists", { path: w.b("f.txt") }), rootIdentity }, "BadArgument")
      expect(e.message).toContain("rootIdentity")
    }
  })

  it("refuses the replaced root on the next read, with the root cached from the one before", async () => {
    const w = workspace({ "f.txt": "before" })
    const extension = NodeAtomicFileSystem.make({ strategy })
    closers.push(extension)
    const h = host(extension)
    const read = w.req("readFileString", { path: w.b("f.txt") })
    expect(await ok(h, read)).toBe("before")
    // The workspace renamed away and a stranger put at its path: same path, another directory.
    const away = `${w.boundaryRoot}.away`
    fs.renameSync(w.boundaryRoot, away)
    fs.mkdirSync(w.boundaryRoot)
    fs.writeFileSync(path.join(w.boundaryRoot, "f.txt"), "stranger")
    expect(rootIdentityOf(w.boundaryRoot)).not.toBe(w.rootIdentity)
    try {
      const e = await failure(h, read)
      expect(e.reason._tag).toBe("Busy")
      expect(e.reason.description ?? "").toContain("workspace_identity_changed")
    } finally {
      fs.rmSync(w.boundaryRoot, { recursive: true, force: true })
      fs.renameSync(away, w.boundaryRoot)
    }
  })

  it("answers a malformed request and an outside path as typed failures from the one callback", async () => {
    const w = workspace({ "f.txt": "f" })
    const extension = NodeAtomicFileSystem.make({ strategy })
    closers.push(extension)
    const h = host(extension)
    await refused(h, w.req("readFile", { path: 7 }), "BadArgument")
    await refused(h, w.req("readFile", { path: "f.txt" }), "BadArgument")
    await refused(h, w.req("readFile", { path: `${w.boundaryRoot}2/f.txt` }), "PermissionDenied")
    await refused(h, w.req("readFile", { path: w.b("missing") }), "NotFound")
  })
})
