/**
 * The root identity against inode reuse. A kernel authorizes a workspace once, by its identity, and
 * sends that identity with every request; an extension that pinned nothing yet (a fresh process, an
 * evicted root, a `close()`) pins the path again and compares. ext4 hands a freed inode number out
 * again at once, so `dev:ino` alone lets an attacker with write access to the workspace's parent
 * delete the workspace, make a directory outside it (it gets the same number), point the
 * workspace's path at it with a symlink, and have the next request accepted there. The identity
 * must be one that reuse does not repeat.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { NodeAtomicFileSystem } from "../../src/effect/index.ts"
import { PathAtomicFileSystem } from "../../src/fallback/index.ts"
import { PinnedRoot } from "../../src/index.ts"
import type { AtomicFileSystem, AtomicRequest } from "../../src/protocol/wire.ts"
import { skipUnless } from "../support/skip.ts"
import { strategies } from "../support/strategies.ts"

const bases: Array<string> = []
afterEach(() => {
  for (const b of bases.splice(0)) fs.rmSync(b, { recursive: true, force: true })
})

interface Reused {
  readonly workspace: string
  readonly elsewhere: string
  readonly identity: string
}

/**
 * The attack's set-up, given how the victim learns the identity: a workspace, its identity, then
 * the workspace deleted and a directory outside it that got the same inode number, and the
 * workspace's path a symlink to it. Tried a bounded number of times; `undefined` when this file
 * system never reused the number (tmpfs, for one, never does).
 */
const reuseInode = async (identify: (p: string) => Promise<string>): Promise<Reused | undefined> => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-reuse-"))
  bases.push(base)
  for (let attempt = 0; attempt < 20; attempt++) {
    const workspace = path.join(base, `ws${attempt}`)
    fs.mkdirSync(workspace)
    fs.writeFileSync(path.join(workspace, "inside.txt"), "inside")
    const identity = await identify(workspace)
    const ino = fs.statSync(workspace).ino
    fs.rmSync(workspace, { recursive: true })
    const elsewhere = path.join(base, `outside${attempt}`)
    fs.mkdirSync(elsewhere)
    if (fs.statSync(elsewhere).ino !== ino) continue
    fs.symlinkSync(elsewhere, workspace)
    return { workspace, elsewhere, identity }
  }
  return undefined
}

const noReuse = "this file system handed out no freed inode number again in 20 tries: the attack cannot be set up here"

const write = (atomic: AtomicFileSystem, r: Reused) =>
  Effect.runPromise(
    Effect.flip(
      atomic.execute({
        operation: "writeFileString",
        path: path.join(r.workspace, "pwned.txt"),
        data: "PWNED",
        boundaryRoot: r.workspace,
        logicalRoot: r.workspace,
        rootIdentity: r.identity
      } as AtomicRequest)
    )
  ).then(
    (e) => e.reason._tag,
    (u: unknown) => `wrote it (${String(u)})`
  )

describe.each(strategies)("a root identity against inode reuse (%s)", (strategy) => {
  it("a fresh extension refuses the old identity at a path now naming another directory with the same inode number", async (ctx) => {
    const first = NodeAtomicFileSystem.make({ strategy })
    const r = await reuseInode((p) => Effect.runPromise(first.identifyRoot!(p)))
    first.close()
    if (r === undefined) return skipUnless(ctx, false, noReuse)
    const fresh = NodeAtomicFileSystem.make({ strategy })
    try {
      expect(await write(fresh, r)).toBe("Busy")
      expect(fs.readdirSync(r.elsewhere)).toEqual([])
      expect(await Effect.runPromise(fresh.identifyRoot!(r.workspace))).not.toBe(r.identity)
    } finally {
      fresh.close()
    }
  })

  it("PinnedRoot.identity differs for the directory that got the old inode number", async (ctx) => {
    const r = await reuseInode(async (p) => {
      const pinned = await PinnedRoot.open(p, { strategy })
      pinned.close()
      return pinned.identity
    })
    if (r === undefined) return skipUnless(ctx, false, noReuse)
    const now = await PinnedRoot.open(r.workspace, { strategy })
    try {
      expect(now.identity).not.toBe(r.identity)
      // The same directory keeps its identity: pinned twice, identified by the extension.
      const again = await PinnedRoot.open(r.workspace, { strategy })
      expect(again.identity).toBe(now.identity)
      again.close()
      const extension = NodeAtomicFileSystem.make({ strategy })
      expect(await Effect.runPromise(extension.identifyRoot!(r.workspace))).toBe(now.identity)
      extension.close()
    } finally {
      now.close()
    }
  })
})

describe("a root identity against inode reuse (path-based fallback)", () => {
  it("refuses the old identity at a path now naming another directory with the same inode number", async (ctx) => {
    const fallback = PathAtomicFileSystem.make()
    const r = await reuseInode((p) => Effect.runPromise(fallback.identifyRoot!(p)))
    if (r === undefined) return skipUnless(ctx, false, noReuse)
    expect(await write(fallback, r)).toBe("Busy")
    expect(fs.readdirSync(r.elsewhere)).toEqual([])
  })
})
