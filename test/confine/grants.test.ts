import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { ConfinementError, GrantStore } from "../../src/confine/index.ts"
import { sandboxTree } from "./support/tree.ts"

const refused = async (p: Promise<unknown>, pattern: RegExp) => {
  const e = await p.then(
    () => undefined,
    (e: unknown) => e
  )
  expect(e).toBeInstanceOf(ConfinementError)
  expect((e as ConfinementError).reason).toBe("invalid-grant")
  expect((e as Error).message).toMatch(pattern)
}

describe("grant store", () => {
  it("adds, lists in order, revokes; every change moves the revision", async () => {
    const s = GrantStore.memory()
    const r0 = s.revision
    const a = await s.add({ path: "/w/.git/config", access: "write" })
    const b = await s.add({ path: "/h/.ssh/known_hosts", access: "read", lifetime: "once" })
    expect(s.list()).toEqual([a, b])
    expect(a).toMatchObject({ scope: "exact", lifetime: "session" })
    expect(s.revision).toBeGreaterThan(r0)
    const r1 = s.revision
    expect(await s.revoke(a.id)).toBe(true)
    expect(await s.revoke(a.id)).toBe(false)
    expect(s.revision).toBeGreaterThan(r1)
    s.consume([b.id])
    expect(s.list()).toEqual([])
  })

  it("consumes only once grants", async () => {
    const s = GrantStore.memory()
    const keep = await s.add({ path: "/x", access: "read" })
    s.consume([keep.id])
    expect(s.list()).toEqual([keep])
  })

  it("keeps persistent grants in its file (mode 0600), apart from any policy, and reads them back", async () => {
    const t = sandboxTree()
    const file = path.join(t.base, "state", "grants.json")
    fs.mkdirSync(path.dirname(file))
    const s = await GrantStore.open(file)
    expect(s.list()).toEqual([])
    const p = await s.add({ path: "/w/.git", access: "write", scope: "recursive", lifetime: "persistent" })
    await s.add({ path: "/w/session-only", access: "read" })
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
    const again = await GrantStore.open(file)
    expect(again.list()).toEqual([p])
    expect(await again.revoke(p.id)).toBe(true)
    expect((await GrantStore.open(file)).list()).toEqual([])
  })

  it("refuses malformed grants and grant files", async () => {
    const s = GrantStore.memory()
    await refused(s.add({ path: "", access: "read" }), /non-empty/)
    await refused(s.add({ path: "/a\0b", access: "read" }), /NUL/)
    await refused(s.add({ path: "/a", access: "all" as never }), /access/)
    await refused(s.add({ path: "/a", access: "read", scope: "tree" as never }), /scope/)
    await refused(s.add({ path: "/a", access: "read", lifetime: "forever" as never }), /lifetime/)
    await refused(s.add({ path: "/", access: "write" }), /'\/'/)
    const t = sandboxTree()
    const bad = path.join(t.base, "bad.json")
    fs.writeFileSync(bad, "{ not json")
    await refused(GrantStore.open(bad), /not JSON/)
    fs.writeFileSync(bad, JSON.stringify({ version: 9, grants: [] }))
    await refused(GrantStore.open(bad), /version 1/)
  })
})
