/**
 * `writeFile(path, data, { atomic: true, sync: false })`: the same atomic publish (a temporary file
 * beside the target, renamed over it; the target's bits kept; a link, a hard-linked file or a
 * directory there refused) without the two fsyncs, counted with strace: an atomic write makes two
 * fsync calls, the unsynced one none. `sync: false` without `atomic` is a BadArgument.
 */
import { spawnSync } from "node:child_process"
import { createRequire } from "node:module"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { PinnedRoot } from "../src/index.ts"
import { skipUnless } from "./support/skip.ts"
import { strategies } from "./support/strategies.ts"
import { scratch } from "./support/tree.ts"
import { rejection } from "./support/rejection.ts"

const repo = path.join(path.dirname(fileURLToPath(import.meta.url)), "..")
const addon = (createRequire(import.meta.url)("node-gyp-build") as { path: (dir: string) => string }).path(repo)
const strace = spawnSync("strace", ["-V"], { encoding: "utf8" }).status === 0

/** fsync and fdatasync calls one raw atomic write makes in a child under strace. */
const fsyncsOf = (root: string, strategy: string, noSync: boolean): number => {
  const trace = path.join(root, "..", "trace.txt")
  const script = `const a = require(${JSON.stringify(addon)});
(async () => {
  const h = await a.pin(${JSON.stringify(root)}, ${JSON.stringify(strategy)})
  await h.execute({ op: a.ops.writeFile, path: "f.txt", data: "new", flag: a.flags.w, atomic: true, noSync: ${noSync} })
  h.close()
})()`
  const r = spawnSync("strace", ["-f", "-qq", "-e", "trace=fsync,fdatasync", "-o", trace, process.execPath, "-e", script], {
    encoding: "utf8"
  })
  expect(r.status, r.stderr).toBe(0)
  const calls = fs
    .readFileSync(trace, "utf8")
    .split("\n")
    .filter((l) => /\b(fsync|fdatasync)\(/.test(l)).length
  fs.rmSync(trace)
  return calls
}

describe.each(strategies)("writeFile atomic without sync (%s)", (strategy) => {
  it("replaces the content atomically and keeps the target's bits", async () => {
    const s = scratch()
    s.make({ "a/script.sh": "old", "dir/": "" })
    fs.chmodSync(s.abs("a/script.sh"), 0o755)
    const root = await PinnedRoot.open(s.root, { strategy })
    const inode = fs.statSync(s.abs("a/script.sh")).ino
    await root.writeFileString("a/script.sh", "new", { atomic: true, sync: false })
    expect(fs.readFileSync(s.abs("a/script.sh"), "utf8")).toBe("new")
    expect(fs.statSync(s.abs("a/script.sh")).mode & 0o7777).toBe(0o755)
    expect(fs.statSync(s.abs("a/script.sh")).ino).not.toBe(inode)
    await root.writeFileString("a/fresh.txt", "fresh", { atomic: true, sync: false })
    expect(fs.readFileSync(s.abs("a/fresh.txt"), "utf8")).toBe("fresh")
    expect(fs.readdirSync(s.abs("a")).sort()).toEqual(["fresh.txt", "script.sh"])
    root.close()
  })

  it("refuses a link, a hard-linked file and a directory, as the synced write does", async () => {
    const s = scratch()
    s.make({ "h.txt": "h", "dir/": "" })
    fs.symlinkSync(s.secret, s.abs("link"))
    fs.linkSync(s.secret, s.abs("hard"))
    const root = await PinnedRoot.open(s.root, { strategy })
    for (const [p, reason] of [
      ["link", "PermissionDenied"],
      ["hard", "PermissionDenied"],
      ["dir", "BadResource"]
    ] as const) {
      expect((await rejection(root.writeFileString(p, "x", { atomic: true, sync: false }))).reason).toBe(reason)
    }
    expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
    expect((await rejection(root.writeFileString("h.txt", "x", { sync: false }))).reason).toBe("BadArgument")
    expect(fs.readFileSync(s.abs("h.txt"), "utf8")).toBe("h")
    root.close()
  })

  it("makes no fsync call, where the synced write makes two (strace)", (ctx) => {
    skipUnless(ctx, strace, "strace is not installed")
    const s = scratch()
    s.make({ "f.txt": "old" })
    expect(fsyncsOf(s.root, strategy, false)).toBe(2)
    expect(fsyncsOf(s.root, strategy, true)).toBe(0)
    expect(fs.readFileSync(s.abs("f.txt"), "utf8")).toBe("new")
  })
})
