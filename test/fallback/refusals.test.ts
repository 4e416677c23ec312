import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { expectReason, harness, spellings } from "./support.ts"
import { mkfifo } from "../support/tree.ts"

const b64 = (s: string) => Buffer.from(s).toString("base64")

describe.each(spellings)("fallback refusals on a quiet tree (%s root)", (spelling) => {
  const setup = async () => {
    const h = await harness(spelling, { "a/b/file.txt": "hello", "top.txt": "top" })
    fs.symlinkSync(h.s.outside, h.s.abs("linkdir")) // first component
    fs.symlinkSync("b", h.s.abs("a/inner")) // middle, and pointing inside: still refused
    fs.symlinkSync(h.s.secret, h.s.abs("a/linkfile")) // last
    return h
  }
  const unchanged = (h: Awaited<ReturnType<typeof setup>>) => {
    expect(fs.readFileSync(h.s.secret, "utf8")).toBe("TOP SECRET")
    expect(fs.statSync(h.s.secret).mode & 0o777).not.toBe(0o777)
    expect(fs.readdirSync(h.s.outside)).toEqual(["secret.txt"])
  }

  it("refuses a symlink first, in the middle and last, for reads, writes and metadata", async () => {
    const h = await setup()
    const paths = ["linkdir/secret.txt", "a/inner/file.txt", "a/linkfile"]
    for (const p of paths) {
      for (const request of [
        { operation: "readFile", path: h.at(p) },
        { operation: "readFileString", path: h.at(p) },
        { operation: "writeFile", path: h.at(p), data: b64("pwned") },
        { operation: "writeFileString", path: h.at(p), data: "pwned" },
        { operation: "chmod", path: h.at(p), options: { mode: 0o777 } },
        { operation: "chown", path: h.at(p), options: { uid: 0, gid: 0 } },
        { operation: "realPath", path: h.at(p) }
      ]) {
        const e = await h.fail(request)
        expectReason(e, "PermissionDenied", /symbolic link/)
        expect(e.reason._tag === "BadArgument" ? "" : e.reason.pathOrDescriptor).toBe(h.at(p))
      }
    }
    for (const p of ["linkdir/secret.txt", "a/inner/file.txt"]) {
      for (const operation of ["exists", "stat", "readLink", "remove"]) {
        expectReason(await h.fail({ operation, path: h.at(p) }), "PermissionDenied", /symbolic link/)
      }
      expectReason(await h.fail({ operation: "makeDirectory", path: h.at(`${p}/new`), options: { recursive: true } }), "PermissionDenied")
      expectReason(await h.fail({ operation: "rename", from: h.at(p), to: h.at("stolen") }), "PermissionDenied")
      expectReason(await h.fail({ operation: "rename", from: h.at("top.txt"), to: h.at(p) }), "PermissionDenied")
    }
    expectReason(await h.fail({ operation: "readDirectory", path: h.at("linkdir") }), "PermissionDenied")
    unchanged(h)
  })

  it("treats a trailing slash after a link as a link met on the way", async () => {
    const h = await setup()
    for (const operation of ["stat", "exists", "readLink", "readDirectory", "remove"]) {
      expectReason(await h.fail({ operation, path: `${h.at("linkdir")}/` }), "PermissionDenied", /symbolic link/)
    }
    expectReason(
      await h.fail({ operation: "makeDirectory", path: `${h.at("linkdir")}/`, options: { recursive: true } }),
      "PermissionDenied"
    )
  })

  it("refuses a hard-linked file for read, stat, write, chmod and chown; removing our name is allowed", async () => {
    const h = await setup()
    fs.linkSync(h.s.secret, h.s.abs("hard"))
    for (const request of [
      { operation: "readFile", path: h.at("hard") },
      { operation: "stat", path: h.at("hard") },
      { operation: "writeFile", path: h.at("hard"), data: b64("pwned") },
      { operation: "writeFileString", path: h.at("hard"), data: "pwned", options: { flag: "a" } },
      { operation: "chmod", path: h.at("hard"), options: { mode: 0o777 } },
      { operation: "chown", path: h.at("hard"), options: { uid: 0, gid: 0 } }
    ]) {
      expectReason(await h.fail(request), "PermissionDenied", /hard-linked/)
    }
    expect(await h.run({ operation: "exists", path: h.at("hard") })).toBe(true)
    unchanged(h)
    await h.run({ operation: "remove", path: h.at("hard") })
    expect(fs.readFileSync(h.s.secret, "utf8")).toBe("TOP SECRET")
  })

  it("refuses .. above the root, even to come back, and resolves it physically below", async () => {
    const h = await setup()
    const name = path.basename(h.base)
    for (const p of ["../outside/secret.txt", `../${name}/top.txt`, "a/../../outside/secret.txt", ".."]) {
      expectReason(await h.fail({ operation: "readFile", path: `${h.base}/${p}` }), "PermissionDenied", /escapes/)
      expectReason(await h.fail({ operation: "writeFileString", path: `${h.base}/${p}`, data: "x" }), "PermissionDenied")
    }
    expect(Buffer.from(await h.run<Uint8Array>({ operation: "readFile", path: `${h.base}/a/b/../b/file.txt` })).toString()).toBe("hello")
    expectReason(await h.fail({ operation: "readFile", path: `${h.base}/a/inner/../b/file.txt` }), "PermissionDenied", /symbolic/)
    unchanged(h)
  })

  it("refuses an absolute path outside both roots, including a sibling sharing the root's prefix", async () => {
    const h = await setup()
    fs.writeFileSync(`${h.s.root}x`, "sibling")
    for (const p of [h.s.secret, `${h.base}x`, `${h.s.root}x`, "/etc/passwd"]) {
      expectReason(await h.fail({ operation: "readFile", path: p }), "PermissionDenied", /outside/)
      expectReason(await h.fail({ operation: "writeFileString", path: p, data: "x" }), "PermissionDenied", /outside/)
    }
    unchanged(h)
  })

  it("refuses a FIFO without blocking on it, and a write to one", async () => {
    const h = await setup()
    mkfifo(h.s.abs("fifo"))
    expectReason(await h.fail({ operation: "readFile", path: h.at("fifo") }), "BadResource", /FIFO/)
    expectReason(await h.fail({ operation: "writeFileString", path: h.at("fifo"), data: "x" }), "BadResource", /FIFO/)
    expect((await h.run<{ type: string }>({ operation: "stat", path: h.at("fifo") })).type).toBe("FIFO")
  })

  it("answers Busy once the root no longer has the identity the kernel pinned", async () => {
    const h = await setup()
    const moved = `${h.s.root}-old`
    fs.renameSync(h.s.root, moved)
    fs.mkdirSync(h.s.root)
    fs.writeFileSync(h.s.abs("top.txt"), "impostor")
    for (const request of [
      { operation: "readFile", path: h.at("top.txt") },
      { operation: "writeFileString", path: h.at("top.txt"), data: "x" },
      { operation: "glob", pattern: h.at("*"), root: h.base },
      { operation: "batch", requests: [{ operation: "readFile", path: h.at("top.txt") }] }
    ]) {
      expectReason(await h.fail(request), "Busy", /identity/)
    }
    expect(fs.readFileSync(h.s.abs("top.txt"), "utf8")).toBe("impostor")
    fs.rmSync(h.s.root, { recursive: true })
    expectReason(await h.fail({ operation: "exists", path: h.at("top.txt") }), "Busy", /identity/)
    fs.rmSync(moved, { recursive: true })
  })
})
