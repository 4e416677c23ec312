/**
 * readDirectory answers sorted by name, byte by byte, as Node's readdir does (libuv sorts each
 * listing), through every layer: PinnedRoot, the atomic host extension, the path-based fallback. A
 * recursive listing is sorted whole. And makeDirectory({ recursive: true }) answers the first
 * directory it created, as Node's mkdir does (root-relative here), or undefined.
 */
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import { describe, expect, it } from "vitest"
import { NodeAtomicFileSystem } from "../../src/effect/index.ts"
import { PathAtomicFileSystem } from "../../src/fallback/index.ts"
import { PinnedRoot } from "../../src/index.ts"
import { host, ok, workspace } from "../effect/support.ts"
import { rejection } from "../support/rejection.ts"
import { strategies } from "../support/strategies.ts"
import { scratch } from "../support/tree.ts"
import { twinOf } from "./twin.ts"

// Created in an order no sort gives, with names whose byte order differs from a case-folding or a
// locale sort.
const names = ["zeta", "b", "a-b", "a.b", "B", "_u", "a", "é", "a b", "Z", "10", "9", "a/c", "a/A", "b/2/x", "b/1"]

const lay = (root: string): void => {
  for (const n of names) {
    if (n === "a" || n === "b" || n === "b/2") continue
    fs.mkdirSync(`${root}/${n.split("/").slice(0, -1).join("/")}`, { recursive: true })
    fs.writeFileSync(`${root}/${n}`, n)
  }
}

const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b))

/** The order the file system itself gives (opendir does not sort): the positive control. */
const onDisk = async (dir: string): Promise<Array<string>> => {
  const out: Array<string> = []
  for await (const e of await fsp.opendir(dir)) out.push(e.name)
  return out
}

describe.each(strategies)("readDirectory order (%s)", (strategy) => {
  it("a flat listing is Node's readdir, in Node's order; a recursive one is Node's set, sorted", async () => {
    const s = scratch()
    lay(s.root)
    const twin = twinOf(s)
    const node = await fsp.readdir(twin)
    // Live: the disk's own order is not the sorted one, so a listing that passed it on would fail.
    expect(await onDisk(s.root)).not.toEqual(node)
    const root = await PinnedRoot.open(s.root, { strategy })
    expect(await root.readDirectory("")).toEqual(node)
    expect(await root.readDirectory("a")).toEqual(await fsp.readdir(`${twin}/a`))
    const nodeAll = await fsp.readdir(twin, { recursive: true })
    const mine = await root.readDirectory("", { recursive: true })
    expect(mine).toEqual([...nodeAll].sort(byteOrder))
    expect(mine).toEqual([...mine].sort(byteOrder))
    root.close()
  })

  it("the atomic host extension answers the same order", async () => {
    const w = workspace()
    lay(w.boundaryRoot)
    const h = host(NodeAtomicFileSystem.make({ strategy }))
    expect(await ok(h, w.req("readDirectory", { path: w.l("") }))).toEqual(await fsp.readdir(w.boundaryRoot))
    const all = await ok(h, w.req("readDirectory", { path: w.l(""), options: { recursive: true } }))
    expect(all).toEqual([...(await fsp.readdir(w.boundaryRoot, { recursive: true }))].sort(byteOrder))
  })

  it("makeDirectory({ recursive: true }) answers the first directory it made, as Node's mkdir", async () => {
    const s = scratch()
    s.make({ "have/": "" })
    const twin = twinOf(s)
    const root = await PinnedRoot.open(s.root, { strategy })
    expect(await root.makeDirectory("have/x/y/z", { recursive: true })).toBe("have/x")
    expect(await fsp.mkdir(`${twin}/have/x/y/z`, { recursive: true })).toBe(`${twin}/have/x`)
    expect(await root.makeDirectory("have/x/y/z", { recursive: true })).toBeUndefined()
    expect(await fsp.mkdir(`${twin}/have/x/y/z`, { recursive: true })).toBeUndefined()
    expect(await root.makeDirectory("top", { recursive: true })).toBe("top")
    expect(await root.makeDirectory("plain")).toBeUndefined()
    expect(await fsp.mkdir(`${twin}/plain`)).toBeUndefined()
    fs.symlinkSync(s.outside, s.abs("out"))
    expect((await rejection(root.makeDirectory("out/x", { recursive: true }))).refusal).toBe("symlink")
    expect((await rejection(root.makeDirectory("../escape", { recursive: true }))).reason).toBe("PermissionDenied")
    expect(fs.readdirSync(s.outside)).toEqual(["secret.txt"])
    root.close()
  })
})

describe("readDirectory order (path-based fallback)", () => {
  it("answers the order the native layers answer", async () => {
    const w = workspace()
    lay(w.boundaryRoot)
    const h = host(PathAtomicFileSystem.make())
    expect(await ok(h, w.req("readDirectory", { path: w.l("") }))).toEqual(await fsp.readdir(w.boundaryRoot))
    const all = await ok(h, w.req("readDirectory", { path: w.l(""), options: { recursive: true } }))
    expect(all).toEqual([...(await fsp.readdir(w.boundaryRoot, { recursive: true }))].sort(byteOrder))
  })
})
