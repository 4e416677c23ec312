/**
 * `await using root = await PinnedRoot.open(dir)` and `using`: the root is closed when the scope
 * ends, normally or by a throw, and an operation already in flight still finishes (the handle is
 * reference-counted).
 */
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import { describe, expect, it } from "vitest"
import { PinnedRoot } from "../../src/index.ts"
import { rejection } from "../support/rejection.ts"
import { strategies } from "../support/strategies.ts"
import { openDescriptorCount, scratch } from "../support/tree.ts"
import { twinOf } from "./twin.ts"

const closedRefusal = async (root: PinnedRoot): Promise<void> => {
  const e = await rejection(root.readFile("f.txt"))
  expect(e.reason).toBe("BadArgument")
  expect(e.description).toMatch(/root is closed/)
}

describe.each(strategies)("dispose (%s)", (strategy) => {
  it("await using closes the root at the end of the scope", async () => {
    const s = scratch()
    s.make({ "f.txt": "hello" })
    const twin = twinOf(s)
    const before = openDescriptorCount()
    let kept: PinnedRoot | undefined
    {
      await using root = await PinnedRoot.open(s.root, { strategy })
      kept = root
      expect((await root.readFile("f.txt")).toString()).toBe(await fsp.readFile(`${twin}/f.txt`, "utf8"))
    }
    await closedRefusal(kept)
    expect(openDescriptorCount()).toBe(before)
  })

  it("using closes it too, also when the scope throws, and in-flight work finishes", async () => {
    const s = scratch()
    s.make({ "f.txt": "hello" })
    let kept: PinnedRoot | undefined
    let pending: Promise<Buffer> | undefined
    const opened = await PinnedRoot.open(s.root, { strategy })
    expect(() => {
      using root = opened
      kept = root
      pending = root.readFile("f.txt")
      throw new Error("scope failed")
    }).toThrow("scope failed")
    expect((await pending!).toString()).toBe("hello")
    await closedRefusal(kept!)
    expect(typeof opened[Symbol.dispose]).toBe("function")
    expect(typeof opened[Symbol.asyncDispose]).toBe("function")
    // Disposing twice is harmless, as close() twice is.
    opened[Symbol.dispose]()
    await opened[Symbol.asyncDispose]()
    expect(fs.readFileSync(s.abs("f.txt"), "utf8")).toBe("hello")
  })

  it("a root from openRoot is disposable the same way", async () => {
    const s = scratch()
    s.make({ "a/f.txt": "in a" })
    await using root = await PinnedRoot.open(s.root, { strategy })
    let kept: PinnedRoot | undefined
    {
      await using sub = await root.openRoot("a")
      kept = sub
      expect(await sub.readFileString("f.txt")).toBe("in a")
    }
    await closedRefusal(kept)
    expect(await root.readDirectory("a")).toEqual(["f.txt"])
  })
})
