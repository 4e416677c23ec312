/**
 * The directory programs at the sizes that once held a thread-pool worker for 29 s and more: a
 * 1,980-level chain plus 200 leaves, created and removed in one trip each, every directory with its
 * mode and identity; and the bounds that cap what one call may hold a worker thread for (4,096
 * directories, 1,048,576 path components), refused as BadArgument before anything is created. How
 * fast is the benchmark's to say (`npm run bench`, "mkdirs, 1,980-level chain"), never a test's.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { PinnedRoot } from "../../src/index.ts"
import { noTestHooks, testHooks, trips } from "../support/hooks.ts"
import { skipUnless } from "../support/skip.ts"
import { strategies } from "../support/strategies.ts"
import { scratch } from "../support/tree.ts"
import { rejection as failure } from "../support/rejection.ts"

const CHAIN = Array.from({ length: 1980 }, () => "d").join("/")

let savedUmask = 0
beforeEach(() => {
  savedUmask = process.umask(0o077)
})
afterEach(() => {
  process.umask(savedUmask)
})

describe.each(strategies)("directory programs at scale (%s)", (strategy) => {
  const setup = async () => {
    const s = scratch()
    const root = await PinnedRoot.open(s.root, { strategy })
    // A chain this deep is more than a recursive fs.rm can remove without running out of stack.
    const removeAll = () => execFileSync("rm", ["-rf", s.root])
    return { s, root, removeAll }
  }

  it("creates a 1,980-level chain plus 200 leaves in one trip, every directory with its mode", async (ctx) => {
    skipUnless(ctx, testHooks, noTestHooks)
    const { s, root, removeAll } = await setup()
    try {
      const plan = [{ path: CHAIN, mode: 0o751 }, ...Array.from({ length: 200 }, (_, i) => ({ path: `${CHAIN}/l${i}`, mode: 0o705 }))]
      const t0 = trips()
      const made = await root.mkdirs(plan)
      expect(trips() - t0).toBe(1)
      expect(made.error).toBeNull()
      expect(made.created).toHaveLength(2180)
      // Parent before child, the leaves last and in name order.
      expect(made.created[0]?.path).toBe("d")
      expect(made.created[1979]?.path).toBe(CHAIN)
      expect(made.created[1980]?.path).toBe(`${CHAIN}/l0`)
      for (const c of [made.created[0]!, made.created[1979]!, made.created[2179]!]) {
        const st = fs.lstatSync(s.abs(c.path), { bigint: true })
        expect(`${st.dev}:${st.ino}`).toBe(c.identity)
      }
      expect(fs.lstatSync(s.abs(CHAIN)).mode & 0o7777).toBe(0o751)
      expect(fs.lstatSync(s.abs(`${CHAIN}/l199`)).mode & 0o7777).toBe(0o705)
      // And the reverse, in one trip too.
      const t1 = trips()
      const gone = await root.rmdirs(made.created)
      expect(trips() - t1).toBe(1)
      expect(gone.stopped).toBe(false)
      expect(gone.members.every((m) => m.status === "removed")).toBe(true)
      expect(fs.readdirSync(s.root)).toEqual([])
    } finally {
      removeAll()
    }
  })

  it("makeDirectory({ recursive: true }) creates a 2,000-level path", async () => {
    const { s, root, removeAll } = await setup()
    try {
      const deep = Array.from({ length: 2000 }, () => "e").join("/")
      await root.makeDirectory(deep, { recursive: true })
      expect(fs.statSync(s.abs(deep)).isDirectory()).toBe(true)
      await root.makeDirectory(deep, { recursive: true }) // exists: nothing to do
    } finally {
      removeAll()
    }
  })

  it("refuses a plan over 4,096 directories, implied ancestors counted, before creating any", async () => {
    const { s, root } = await setup()
    const flat = Array.from({ length: 4097 }, (_, i) => ({ path: `f${i}` }))
    const e = await failure(root.mkdirs(flat))
    expect(e.reason).toBe("BadArgument")
    expect(e.description).toMatch(/more than 4096 directories/)
    // 4,096 entries two levels deep imply 4,097 directories (one shared parent).
    const implied = await failure(root.mkdirs(Array.from({ length: 4096 }, (_, i) => ({ path: `p/c${i}` }))))
    expect(implied.reason).toBe("BadArgument")
    expect(fs.readdirSync(s.root)).toEqual([])
  })

  it("refuses a plan over 1,048,576 path components in all, before creating any", async () => {
    const { s, root } = await setup()
    const path2048 = Array.from({ length: 2048 }, () => "c").join("/")
    // The same 2,048-component path 513 times: one tree of 2,048 directories, 1,050,624 components.
    const e = await failure(root.mkdirs(Array.from({ length: 513 }, () => ({ path: path2048 }))))
    expect(e.reason).toBe("BadArgument")
    expect(e.description).toMatch(/more than 1048576 path components/)
    expect(fs.readdirSync(s.root)).toEqual([])
  })

  it("refuses an rmdirs over 4,096 members before removing any (what one mkdirs can create, it can undo)", async () => {
    const { s, root } = await setup()
    s.make({ "keep/": "" })
    const st = fs.lstatSync(s.abs("keep"), { bigint: true })
    const identity = `${st.dev}:${st.ino}`
    const e = await failure(root.rmdirs(Array.from({ length: 4097 }, () => ({ path: "keep", identity }))))
    expect(e.reason).toBe("BadArgument")
    expect(fs.existsSync(s.abs("keep"))).toBe(true)
  })
})
