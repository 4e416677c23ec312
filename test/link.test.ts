import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { PinnedRoot } from "../src/index.ts"
import { expectAnswers } from "./support/answers.ts"
import { strategies } from "./support/strategies.ts"
import { mkfifo, openDescriptorCount, scratch } from "./support/tree.ts"
import { rejection as failure } from "./support/rejection.ts"

const BAD: Array<unknown> = [undefined, null, 42, {}, ["a"], "a\0b", "x".repeat(5000), `${"y".repeat(300)}/z`]

describe.each(strategies)("readLink, realPath, resolve (%s)", (strategy) => {
  const setup = async () => {
    const s = scratch()
    s.make({ "a/b/file.txt": "hello", "a/b/c/d/deep.txt": "deep", "top.txt": "top", "empty/": "" })
    fs.symlinkSync(s.outside, s.abs("linkdir")) // absolute text, first component
    fs.symlinkSync(s.secret, s.abs("a/linkfile")) // absolute text, last component
    fs.symlinkSync("b", s.abs("a/inner")) // relative text, stays inside: still never followed
    fs.symlinkSync("../../outside/secret.txt", s.abs("a/out")) // relative text leading outside
    fs.symlinkSync("nowhere", s.abs("a/dangling"))
    const root = await PinnedRoot.open(s.root, { strategy })
    expect(root.strategy).toBe(strategy)
    return { s, root }
  }

  describe("readLink", () => {
    it("reads a final link's text, relative or absolute, at the root or deeper", async () => {
      const { s, root } = await setup()
      await expectAnswers(
        (p) => root.readLink(p),
        [
          ["a/inner", "b"],
          ["a/linkfile", s.secret],
          ["linkdir", s.outside],
          ["a/out", "../../outside/secret.txt"],
          ["a/dangling", "nowhere"],
          ["./a//inner", "b"]
        ]
      )
    })

    it("reads link text longer than a small buffer in full", async () => {
      const { s, root } = await setup()
      const long = `${"seg/".repeat(1000)}end`
      fs.symlinkSync(long, s.abs("long"))
      expect(await root.readLink("long")).toBe(long)
    })

    it("refuses a link met on the way, first or in the middle, and a trailing slash after one", async () => {
      const { root } = await setup()
      for (const p of ["linkdir/secret.txt", "a/inner/file.txt", "linkdir/", "a/inner/"]) {
        const e = await failure(root.readLink(p))
        expect(e.reason).toBe("PermissionDenied")
        expect(e.refusal).toBe("symlink")
        expect(e.path).toBe(p)
      }
    })

    it("answers EINVAL for what is not a link, the root included, as readlink(2) does", async () => {
      const { root } = await setup()
      for (const p of ["top.txt", "a", "a/b/", "", "."]) {
        const e = await failure(root.readLink(p))
        expect(e.code).toBe("EINVAL")
        expect(e.refusal).toBe("")
        expect(e.reason).toBe("Unknown")
      }
    })

    it("maps a missing link and a file on the way", async () => {
      const { root } = await setup()
      expect((await failure(root.readLink("a/nope"))).reason).toBe("NotFound")
      expect((await failure(root.readLink("nope/x"))).reason).toBe("NotFound")
      expect((await failure(root.readLink("top.txt/x"))).reason).toBe("BadResource")
    })

    it("resolves .. physically and never above the root", async () => {
      const { s, root } = await setup()
      expect(await root.readLink("a/b/../inner")).toBe("b")
      expect((await failure(root.readLink("a/inner/../linkfile"))).refusal).toBe("symlink")
      const name = path.basename(s.root)
      for (const p of ["../outside", `../${name}/a/inner`, "a/../../x"]) {
        const e = await failure(root.readLink(p))
        expect(e.reason).toBe("PermissionDenied")
        expect(e.refusal).toBe("escape")
      }
    })

    it("refuses absolute paths and malformed input as BadArgument", async () => {
      const { s, root } = await setup()
      expect((await failure(root.readLink(s.abs("a/inner")))).reason).toBe("BadArgument")
      for (const p of BAD) {
        expect((await failure((async () => root.readLink(p as string))())).reason).toBe("BadArgument")
      }
    })
  })

  describe("realPath", () => {
    it("answers the canonical root-relative path", async () => {
      const { root } = await setup()
      await expectAnswers(
        (p) => root.realPath(p),
        [
          ["a/b/file.txt", "a/b/file.txt"],
          ["./a//b/./", "a/b"],
          ["a/b/../b/c/d/deep.txt", "a/b/c/d/deep.txt"],
          ["a/b/..", "a"],
          ["", ""],
          [".", ""]
        ]
      )
    })

    it("refuses a link anywhere, the final component included", async () => {
      const { root } = await setup()
      for (const p of ["linkdir/secret.txt", "a/inner/file.txt", "a/linkfile", "a/inner", "a/dangling", "linkdir/"]) {
        const e = await failure(root.realPath(p))
        expect(e.reason).toBe("PermissionDenied")
        expect(e.refusal).toBe("symlink")
        expect(e.path).toBe(p)
      }
    })

    it("requires the path to exist and be consistent", async () => {
      const { root } = await setup()
      expect((await failure(root.realPath("a/missing"))).reason).toBe("NotFound")
      expect((await failure(root.realPath("a/missing/x"))).reason).toBe("NotFound")
      expect((await failure(root.realPath("top.txt/x"))).reason).toBe("BadResource")
      expect((await failure(root.realPath("top.txt/"))).reason).toBe("BadResource")
    })

    it("resolves .. physically and never above the root", async () => {
      const { s, root } = await setup()
      expect((await failure(root.realPath("a/inner/../b"))).refusal).toBe("symlink")
      const name = path.basename(s.root)
      for (const p of ["..", `../${name}`, "a/../../outside"]) {
        expect((await failure(root.realPath(p))).refusal).toBe("escape")
      }
    })

    it("names a hard-linked file without reading it (only its content and metadata are refused)", async () => {
      const { s, root } = await setup()
      fs.linkSync(s.secret, s.abs("hard.txt"))
      expect(await root.realPath("hard.txt")).toBe("hard.txt")
      expect(await root.resolve("hard.txt")).toEqual({ path: "hard.txt", target: null })
      expect((await failure(root.readLink("hard.txt"))).code).toBe("EINVAL")
      expect((await failure(root.stat("hard.txt"))).refusal).toBe("hardlink")
    })

    it("refuses absolute paths and malformed input as BadArgument", async () => {
      const { s, root } = await setup()
      expect((await failure(root.realPath(s.abs("a")))).reason).toBe("BadArgument")
      for (const p of BAD) {
        expect((await failure((async () => root.realPath(p as string))())).reason).toBe("BadArgument")
      }
    })
  })

  describe("resolve", () => {
    it("answers a plain path whole, lexed, with no target", async () => {
      const { root } = await setup()
      expect(await root.resolve("a/b/file.txt")).toEqual({ path: "a/b/file.txt", target: null })
      expect(await root.resolve("./a//b/c/./d/deep.txt")).toEqual({ path: "a/b/c/d/deep.txt", target: null })
      expect(await root.resolve("a/b/")).toEqual({ path: "a/b", target: null })
      expect(await root.resolve("a/b/../b/c")).toEqual({ path: "a/b/c", target: null })
      expect(await root.resolve("")).toEqual({ path: "", target: null })
      // One name directly in the root: under openat2 a single statx answers it.
      expect(await root.resolve("a")).toEqual({ path: "a", target: null })
      expect(await root.resolve("./a")).toEqual({ path: "a", target: null })
    })

    it("answers a missing component and what follows as requested", async () => {
      const { root } = await setup()
      expect(await root.resolve("a/missing/x")).toEqual({ path: "a/missing/x", target: null })
      expect(await root.resolve("a/b/missing")).toEqual({ path: "a/b/missing", target: null })
      expect(await root.resolve("missing/")).toEqual({ path: "missing", target: null })
      expect(await root.resolve("nope/x/y/z")).toEqual({ path: "nope/x/y/z", target: null })
      expect(await root.resolve("nope")).toEqual({ path: "nope", target: null })
    })

    it("stops at the first link, first, in the middle or last, with its text", async () => {
      const { s, root } = await setup()
      expect(await root.resolve("linkdir/secret.txt")).toEqual({ path: "linkdir", target: s.outside })
      expect(await root.resolve("linkdir")).toEqual({ path: "linkdir", target: s.outside })
      expect(await root.resolve("a/inner/file.txt")).toEqual({ path: "a/inner", target: "b" })
      expect(await root.resolve("a/inner/missing/x")).toEqual({ path: "a/inner", target: "b" })
      expect(await root.resolve("a/linkfile")).toEqual({ path: "a/linkfile", target: s.secret })
      expect(await root.resolve("a/dangling")).toEqual({ path: "a/dangling", target: "nowhere" })
      // A trailing slash after a link is a link met on the way: the link is the answer.
      expect(await root.resolve("a/inner/")).toEqual({ path: "a/inner", target: "b" })
    })

    it("reports a link inside that points outside without opening what it names", async () => {
      const { s, root } = await setup()
      expect(await root.resolve("a/out")).toEqual({ path: "a/out", target: "../../outside/secret.txt" })
      // A FIFO outside: opening it to read would block this test until it times out.
      mkfifo(path.join(s.outside, "pipe"))
      fs.symlinkSync(path.join(s.outside, "pipe"), s.abs("a/pipe"))
      fs.symlinkSync("../../outside/pipe", s.abs("a/b/relpipe"))
      expect(await root.resolve("a/pipe")).toEqual({ path: "a/pipe", target: path.join(s.outside, "pipe") })
      expect(await root.resolve("a/b/relpipe")).toEqual({ path: "a/b/relpipe", target: "../../outside/pipe" })
      // A FIFO inside is reached (it exists) and never opened either.
      mkfifo(s.abs("a/b/fifo"))
      expect(await root.resolve("a/b/fifo")).toEqual({ path: "a/b/fifo", target: null })
    })

    it("fails on a regular file in the middle", async () => {
      const { root } = await setup()
      for (const p of ["top.txt/x", "a/b/file.txt/y/z", "top.txt/"]) {
        const e = await failure(root.resolve(p))
        expect(e.code).toBe("ENOTDIR")
        expect(e.reason).toBe("BadResource")
      }
    })

    it("refuses .. through a link and above the root", async () => {
      const { s, root } = await setup()
      // ".." is resolved physically before the walk (prepare_path, shared by every operation): a
      // link that a ".." would climb back out of is refused; one after the last ".." is answered.
      expect((await failure(root.resolve("a/inner/../b"))).refusal).toBe("symlink")
      expect(await root.resolve("a/b/../inner/x")).toEqual({ path: "a/inner", target: "b" })
      const name = path.basename(s.root)
      for (const p of ["..", `../${name}/a`, "a/../../outside/secret.txt"]) {
        expect((await failure(root.resolve(p))).refusal).toBe("escape")
      }
    })

    it("refuses absolute paths and malformed input as BadArgument", async () => {
      const { s, root } = await setup()
      expect((await failure(root.resolve(s.abs("a")))).reason).toBe("BadArgument")
      expect((await failure(root.resolve(s.secret))).reason).toBe("BadArgument")
      for (const p of BAD) {
        expect((await failure((async () => root.resolve(p as string))())).reason).toBe("BadArgument")
      }
    })

    it("answers resolve members of a batch independently", async () => {
      const { s, root } = await setup()
      const out = await root.batch([
        { operation: "resolve", path: "a/inner/file.txt" },
        { operation: "resolve", path: "top.txt/x" },
        { operation: "resolve", path: "a/missing" },
        { operation: "readLink", path: "linkdir" },
        { operation: "realPath", path: "a/b/" }
      ])
      expect(out[0]).toEqual({ ok: true, value: { path: "a/inner", target: "b" } })
      expect(out[1]!.ok).toBe(false)
      expect(out[2]).toEqual({ ok: true, value: { path: "a/missing", target: null } })
      expect(out[3]).toEqual({ ok: true, value: s.outside })
      expect(out[4]).toEqual({ ok: true, value: "a/b" })
    })

    it("leaks no descriptor on any path through the three operations", async () => {
      const { root } = await setup()
      const before = openDescriptorCount()
      for (const p of ["a/b/c/d/deep.txt", "a/inner/x", "a/missing/x", "top.txt/x", "linkdir", "a/linkfile"]) {
        await root.resolve(p).catch(() => undefined)
        await root.readLink(p).catch(() => undefined)
        await root.realPath(p).catch(() => undefined)
      }
      expect(openDescriptorCount()).toBe(before)
    })
  })
})
