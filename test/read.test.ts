import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { contentBudget, defaultContentBudget, PinnedFsError, PinnedRoot } from "../src/index.ts"
import { strategies } from "./support/strategies.ts"
import { mkfifo, scratch } from "./support/tree.ts"
import { rejection as refusal } from "./support/rejection.ts"

describe.each(strategies)("exists, stat, readFile (%s)", (strategy) => {
  const setup = async () => {
    const s = scratch()
    s.make({ "a/b/file.txt": "hello", "top.txt": "top" })
    fs.symlinkSync(s.outside, s.abs("linkdir"))
    fs.symlinkSync(s.secret, s.abs("a/linkfile"))
    fs.symlinkSync("b", s.abs("a/inner")) // a link that stays inside: still refused on the way
    const root = await PinnedRoot.open(s.root, { strategy })
    expect(root.strategy).toBe(strategy)
    return { s, root }
  }

  it("reads a file at depth and at the root", async () => {
    const { root } = await setup()
    expect((await root.readFile("a/b/file.txt")).toString()).toBe("hello")
    expect(await root.readFileString("top.txt")).toBe("top")
    expect(await root.exists("a/b/file.txt")).toBe(true)
    expect(await root.exists("a/b/nope")).toBe(false)
    // As Effect's exists: only NotFound is false; a file used as a directory is an error.
    expect((await refusal(root.exists("top.txt/x"))).reason).toBe("BadResource")
    const info = await root.stat("a/b/file.txt")
    expect(info.type).toBe("File")
    expect(info.size).toBe(5)
    expect((await root.stat("a")).type).toBe("Directory")
    expect((await root.stat("")).type).toBe("Directory")
  })

  it("refuses a symlink first, in the middle and last", async () => {
    const { root } = await setup()
    for (const p of ["linkdir/secret.txt", "a/inner/file.txt", "a/linkfile"]) {
      const e = await refusal(root.readFile(p))
      expect(e.reason).toBe("PermissionDenied")
      expect(e.refusal).toBe("symlink")
      expect(e.path).toBe(p)
    }
  })

  it("describes a trailing link without following it", async () => {
    const { root } = await setup()
    expect(await root.exists("a/linkfile")).toBe(true)
    expect((await root.stat("a/linkfile")).type).toBe("SymbolicLink")
    expect((await refusal(root.stat("linkdir/secret.txt"))).refusal).toBe("symlink")
    expect((await refusal(root.exists("linkdir/secret.txt"))).refusal).toBe("symlink")
  })

  it("treats a trailing slash after a link as a link met on the way", async () => {
    const { root } = await setup()
    expect((await refusal(root.stat("linkdir/"))).reason).toBe("PermissionDenied")
    expect((await refusal(root.readFile("linkdir/secret.txt/"))).reason).not.toBe("NotFound")
  })

  it("resolves .. physically and never above the root", async () => {
    const { s, root } = await setup()
    expect((await root.readFile("a/b/../b/file.txt")).toString()).toBe("hello")
    expect((await refusal(root.readFile("a/inner/../b/file.txt"))).refusal).toBe("symlink")
    const name = path.basename(s.root)
    for (const p of ["../outside/secret.txt", `../${name}/top.txt`, "a/../../outside/secret.txt"]) {
      const e = await refusal(root.readFile(p))
      expect(e.reason).toBe("PermissionDenied")
      expect(e.refusal).toBe("escape")
    }
  })

  it("refuses absolute paths as bad input", async () => {
    const { s, root } = await setup()
    for (const p of [s.secret, s.abs("top.txt")]) {
      expect((await refusal(root.readFile(p))).reason).toBe("BadArgument")
    }
  })

  it("refuses a hard-linked file for read and stat", async () => {
    const { s, root } = await setup()
    fs.linkSync(s.secret, s.abs("hard.txt"))
    for (const op of [() => root.readFile("hard.txt"), () => root.stat("hard.txt")]) {
      const e = await refusal(op())
      expect(e.reason).toBe("PermissionDenied")
      expect(e.refusal).toBe("hardlink")
    }
  })

  it("refuses a FIFO without blocking on it", async () => {
    const { s, root } = await setup()
    mkfifo(s.abs("pipe"))
    const e = await refusal(root.readFile("pipe"))
    expect(e.reason).toBe("BadResource")
    expect(e.refusal).toBe("notregular")
  })

  it("maps plain errno failures", async () => {
    const { root } = await setup()
    expect((await refusal(root.readFile("missing"))).reason).toBe("NotFound")
    expect((await refusal(root.readFile("a"))).reason).toBe("BadResource")
    expect((await refusal(root.readFile("top.txt/x"))).reason).toBe("BadResource")
  })

  it("rejects malformed input with BadArgument and no crash", async () => {
    const { root } = await setup()
    const bad: Array<unknown> = [undefined, null, 42, {}, ["a"], "a\0b", "x".repeat(5000), `${"y".repeat(300)}/z`]
    for (const p of bad) {
      const e = await (async () => root.readFile(p as string))().then(
        () => undefined,
        (e: unknown) => e
      )
      expect(e).toBeInstanceOf(PinnedFsError)
      expect((e as PinnedFsError).reason).toBe("BadArgument")
    }
  })
})

describe.each(strategies)("the process's content budget (%s)", (strategy) => {
  const MiB = 1024 * 1024

  it("refuses reads past the budget at once, typed, and takes them again once the others settle", async () => {
    const s = scratch()
    for (let i = 0; i < 8; i++) {
      fs.writeFileSync(s.abs(`big-${i}`), "")
      fs.truncateSync(s.abs(`big-${i}`), 16 * MiB)
    }
    const root = await PinnedRoot.open(s.root, { strategy })
    expect(contentBudget()).toEqual({ budget: defaultContentBudget, inFlight: 0 })
    try {
      // Smaller than one content: that read is refused whatever else runs.
      contentBudget(10 * MiB)
      const alone = await refusal(root.readFile("big-0"))
      expect({ code: alone.code, reason: alone.reason, refusal: alone.refusal }).toEqual({ code: "ENOMEM", reason: "Unknown", refusal: "" })
      expect(alone.description).toMatch(/^16777217 bytes of content would take the process past its content budget of 10485760 bytes/)
      // Room for three 16 MiB contents (each also needs the byte that proves its end): eight at
      // once are each the content or that refusal, however the pool runs them.
      expect(contentBudget(50 * MiB).budget).toBe(50 * MiB)
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          root.readFile(`big-${i}`).then(
            (b) => b.length,
            (e: unknown) => e
          )
        )
      )
      const refused = answers.filter((a): a is PinnedFsError => a instanceof PinnedFsError)
      for (const e of refused) {
        expect({ code: e.code, reason: e.reason, refusal: e.refusal }).toEqual({ code: "ENOMEM", reason: "Unknown", refusal: "" })
        expect(e.description).toMatch(/past its content budget of 52428800 bytes/)
      }
      for (const a of answers) if (!(a instanceof PinnedFsError)) expect(a).toBe(16 * MiB)
      // Handed over, nothing is in flight; a batch past the budget fails member by member.
      expect(contentBudget().inFlight).toBe(0)
      const batch = await root.batch(
        Array.from({ length: 4 }, (_, i) => ({ operation: "readFile" as const, path: `big-${i}` })),
        { response: 2 ** 31 }
      )
      expect(batch.map((m) => (m.ok ? "ok" : (m.error as PinnedFsError).code))).toEqual(["ok", "ok", "ok", "ENOMEM"])
      expect(contentBudget().inFlight).toBe(0)
      expect((await root.readFile("big-0")).length).toBe(16 * MiB)
    } finally {
      contentBudget(0)
      root.close()
    }
    expect(contentBudget().budget).toBe(defaultContentBudget)
  })

  it("refuses a budget that is not a non-negative safe integer", () => {
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 60, "1" as unknown as number]) {
      expect(() => contentBudget(bad)).toThrow(PinnedFsError)
    }
    expect(contentBudget().budget).toBe(defaultContentBudget)
  })
})
