/**
 * Hard-linked store files under `symlinks: "within"`. pnpm imports package files from its store
 * (outside the workspace) as hard links, so `node_modules/.pnpm/<pkg>/node_modules/<pkg>/index.js`
 * is one inode with a second name outside the root: the very shape of a planted hard link to a key
 * the user owns. Following links within the root does not change the rule: a hard-linked file is
 * refused for every operation, reads included (docs/security.md, "Hard links and package stores").
 * With the files copied into the workspace (pnpm's `package-import-method=copy`, or a reflink
 * `clone`), the same tree reads through its links.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { PinnedRoot } from "../../src/index.ts"
import { rejection } from "../support/rejection.ts"
import { strategies } from "../support/strategies.ts"
import { scratch } from "../support/tree.ts"

const pkg = ".pnpm/is-number@7.0.0/node_modules/is-number"

/** A two-package pnpm workspace; `hard` imports the store's file as a hard link, else as a copy. */
const workspace = (hard: boolean) => {
  const s = scratch()
  const store = path.join(s.outside, "store")
  fs.mkdirSync(store)
  const stored = path.join(store, "index.js")
  fs.writeFileSync(stored, "module.exports = isNumber")
  s.make({ "packages/a/index.js": "require('is-number')", "packages/b/index.js": "b", [`node_modules/${pkg}/`]: "" })
  const file = s.abs(`node_modules/${pkg}/index.js`)
  if (hard) fs.linkSync(stored, file)
  else fs.copyFileSync(stored, file)
  fs.mkdirSync(s.abs("packages/a/node_modules"))
  fs.symlinkSync("../../../node_modules/.pnpm/is-number@7.0.0/node_modules/is-number", s.abs("packages/a/node_modules/is-number"))
  fs.symlinkSync("../../b", s.abs("packages/a/node_modules/b"))
  return { s, stored }
}

describe.each(strategies)("pnpm store files, symlinks 'within' (%s)", (strategy) => {
  it("refuses a hard-linked store file for reads, stat and writes; node:fs reads the store through it", async () => {
    const { s, stored } = workspace(true)
    const root = await PinnedRoot.open(s.root, { strategy, symlinks: "within" })
    for (const p of ["packages/a/node_modules/is-number/index.js", `node_modules/${pkg}/index.js`]) {
      for (const call of [() => root.readFile(p), () => root.stat(p), () => root.writeFileString(p, "x"), () => root.chmod(p, 0o600)]) {
        const e = await rejection(call())
        expect(e.refusal, `${p}: ${e.message}`).toBe("hardlink")
        expect(e.reason).toBe("PermissionDenied")
      }
    }
    // The workspace's own links and files still read.
    expect(await root.readFileString("packages/a/node_modules/b/index.js")).toBe("b")
    expect(await root.readDirectory("packages/a/node_modules/is-number")).toEqual(["index.js"])
    root.close()
    // Positive control: the name inside is the store's file outside.
    const inside = fs.statSync(s.abs("packages/a/node_modules/is-number/index.js"))
    expect(inside.nlink).toBe(2)
    expect(inside.ino).toBe(fs.statSync(stored).ino)
    expect(fs.readFileSync(s.abs("packages/a/node_modules/is-number/index.js"), "utf8")).toBe("module.exports = isNumber")
    expect(fs.readFileSync(stored, "utf8")).toBe("module.exports = isNumber")
  })

  it("reads the same workspace through its links once the store's files are copied in", async () => {
    const { s } = workspace(false)
    const root = await PinnedRoot.open(s.root, { strategy, symlinks: "within" })
    expect(await root.readFileString("packages/a/node_modules/is-number/index.js")).toBe("module.exports = isNumber")
    expect((await root.stat("packages/a/node_modules/is-number/index.js")).nlink).toBe(1)
    root.close()
    const strict = await PinnedRoot.open(s.root, { strategy })
    expect((await rejection(strict.readFile("packages/a/node_modules/is-number/index.js"))).refusal).toBe("symlink")
    strict.close()
  })
})
