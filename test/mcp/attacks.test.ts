/**
 * Attacks planted in the tree, nothing racing: each cell runs against the reference server (the
 * positive control: in each case listed below it is known to escape, and it must escape here) and
 * against `pinnedfs mcp` under each strategy, which must refuse with the documented text and leave
 * the outside untouched.
 *
 * - a hard link to an outside file: the reference leaks it through read_text_file,
 *   read_multiple_files, read_media_file, edit_file's diff, and get_file_info's metadata;
 * - a symbolic link to an outside file: the reference leaks its size through
 *   list_directory_with_sizes (it stats through the link);
 * - a name that ends in a quote or white space: the reference compares the path with that
 *   stripped and then acts on it as given, which is a sibling of the allowed directory: it reads
 *   it, creates it as a directory, writes it;
 * - a symbolic link that stays inside: the reference follows it, pinnedfs refuses it;
 * - a FIFO: the reference blocks on it until the client gives up; pinnedfs refuses it at once.
 * - links the reference's 2025 fixes hold against (a link out, a dangling link out): both refuse.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { strategies } from "../support/strategies.ts"
import { mkfifo } from "../support/tree.ts"
import { type Server, startOurs, startReference, textOf } from "./support/servers.ts"
import { type Twins, twins } from "./support/twins.ts"

const SECRET = "TOP SECRET"

describe.each(strategies)("planted attacks (%s)", (strategy) => {
  let t: Twins
  let ours: Server
  let reference: Server
  beforeAll(async () => {
    t = twins()
    t.make({ "sub/inside.txt": "inside", "plain.txt": "plain" })
    const secret = path.join(t.outside, "secret.txt")
    t.both((root) => {
      fs.linkSync(secret, path.join(root, "hard.txt"))
      fs.linkSync(secret, path.join(root, "hard.png"))
      fs.symlinkSync(secret, path.join(root, "outlink"))
      fs.symlinkSync(t.outside, path.join(root, "outdir"))
      fs.symlinkSync(path.join(t.outside, "created-through-link"), path.join(root, "dangling"))
      fs.symlinkSync("sub", path.join(root, "alias"))
      mkfifo(path.join(root, "fifo"))
      // The sibling a stripped quote or space turns a path into.
      fs.writeFileSync(`${root}"`, SECRET)
    })
    ;[ours, reference] = await Promise.all([startOurs(["--strategy", strategy, t.ours]), startReference([t.reference])])
  }, 60_000)
  afterAll(async () => {
    await Promise.all([ours?.close(), reference?.close()])
    t?.cleanup()
  })

  const both = async (tool: string, args: (root: string) => Record<string, unknown>) => ({
    reference: textOf(await reference.call(tool, args(t.reference))),
    ours: textOf(await ours.call(tool, args(t.ours)))
  })
  const untouched = () => {
    expect(fs.readdirSync(t.outside)).toEqual(["secret.txt"])
    expect(fs.readFileSync(path.join(t.outside, "secret.txt"), "utf8")).toBe(SECRET)
    expect(fs.readFileSync(`${t.reference}"`, "utf8")).toBe(SECRET)
  }

  const hardLinkRefusal = (root: string, name: string) =>
    `Access denied - file with more than one name: ${root}/${name} is hard-linked (pinnedfs refuses such a file: another of its names may lie outside the allowed directories)`

  it("a hard link to an outside file: the reference leaks it through four tools and get_file_info, pinnedfs refuses", async () => {
    const reads = [
      ["read_text_file", (r: string) => ({ path: `${r}/hard.txt` })],
      ["read_file", (r: string) => ({ path: `${r}/hard.txt` })],
      ["read_text_file", (r: string) => ({ path: `${r}/hard.txt`, tail: 1 })],
      ["read_text_file", (r: string) => ({ path: `${r}/hard.txt`, head: 1 })],
      ["edit_file", (r: string) => ({ path: `${r}/hard.txt`, edits: [{ oldText: "TOP", newText: "TIP" }], dryRun: true })]
    ] as const
    for (const [tool, args] of reads) {
      const r = await both(tool, args)
      expect(r.reference, tool).toContain(SECRET)
      expect(r.ours, tool).toBe(hardLinkRefusal(t.ours, "hard.txt"))
    }
    const media = await both("read_media_file", (r) => ({ path: `${r}/hard.png` }))
    expect(media.reference).toContain(Buffer.from(SECRET).toString("base64"))
    expect(media.ours).toBe(hardLinkRefusal(t.ours, "hard.png"))
    const many = await both("read_multiple_files", (r) => ({ paths: [`${r}/hard.txt`, `${r}/plain.txt`] }))
    expect(many.reference).toContain(SECRET)
    expect(many.ours).toBe(`${t.ours}/hard.txt: Error - ${hardLinkRefusal(t.ours, "hard.txt")}\n---\n${t.ours}/plain.txt:\nplain\n`)
    const info = await both("get_file_info", (r) => ({ path: `${r}/hard.txt` }))
    expect(info.reference).toMatch(/^size: 10\n/)
    expect(info.ours).toBe(hardLinkRefusal(t.ours, "hard.txt"))
    // Writing: the reference replaces the name (the outside file keeps its content); pinnedfs refuses.
    expect((await ours.call("write_file", { path: `${t.ours}/hard.txt`, content: "x" })).isError).toBe(true)
    expect(fs.statSync(path.join(t.ours, "hard.txt")).ino).toBe(fs.statSync(path.join(t.outside, "secret.txt")).ino)
    untouched()
  })

  it("a link to an outside file: the reference lists the outside file's size, pinnedfs the link's own", async () => {
    const r = await both("list_directory_with_sizes", (root) => ({ path: root }))
    const line = (text: string) => text.split("\n").find((l) => l.startsWith("[FILE] outlink"))
    expect(line(r.reference)).toBe(`[FILE] ${"outlink".padEnd(30)} ${"10 B".padStart(10)}`)
    const own = fs.lstatSync(path.join(t.ours, "outlink")).size
    expect(own).not.toBe(10)
    expect(line(r.ours)).toBe(`[FILE] ${"outlink".padEnd(30)} ${`${own} B`.padStart(10)}`)
    untouched()
  })

  it("a trailing quote or space: the reference reads, makes and writes a sibling outside, pinnedfs refuses", async () => {
    const refusal = (p: string) =>
      `Access denied - path outside allowed directories: ${p} not in ${t.ours} ` +
      "(pinnedfs compares the path as it is used; the trailing quote or white space that makes it look allowed names another directory's entry)"
    const read = await both("read_text_file", (r) => ({ path: `${r}"` }))
    expect(read.reference).toBe(SECRET)
    expect(read.ours).toBe(refusal(`${t.ours}"`))
    const made = await both("create_directory", (r) => ({ path: `${r}'` }))
    expect(made.reference).toBe(`Successfully created directory ${t.reference}'`)
    expect(fs.statSync(`${t.reference}'`).isDirectory()).toBe(true)
    expect(made.ours).toBe(refusal(`${t.ours}'`))
    const wrote = await both("write_file", (r) => ({ path: `${r} `, content: "escaped" }))
    expect(wrote.reference).toBe(`Successfully wrote to ${t.reference} `)
    expect(fs.readFileSync(`${t.reference} `, "utf8")).toBe("escaped")
    expect(wrote.ours).toBe(refusal(`${t.ours} `))
    expect(fs.existsSync(`${t.ours}'`) || fs.existsSync(`${t.ours} `)).toBe(false)
    untouched()
  })

  it("a link that stays inside: the reference follows it, pinnedfs refuses it and lists it as a file", async () => {
    const r = await both("read_text_file", (root) => ({ path: `${root}/alias/inside.txt` }))
    expect(r.reference).toBe("inside")
    expect(r.ours).toBe(
      `Access denied - symbolic link not followed: ${t.ours}/alias/inside.txt is or passes through a symbolic link (pinnedfs follows no link, not even one whose target is inside the allowed directories)`
    )
    const listed = await both("list_directory", (root) => ({ path: `${root}/alias` }))
    expect(listed.reference).toBe("[FILE] inside.txt")
    expect(listed.ours).toMatch(/^Access denied - symbolic link not followed: /)
    // search_files lists a link by its own name; the reference lists only the links it can follow inside.
    const found = await both("search_files", (root) => ({ path: root, pattern: "{alias,outlink,outdir,dangling}" }))
    expect(found.reference).toBe(`${t.reference}/alias`)
    expect(found.ours).toBe(["alias", "dangling", "outdir", "outlink"].map((n) => `${t.ours}/${n}`).join("\n"))
    const info = await both("get_file_info", (root) => ({ path: `${root}/alias` }))
    expect(info.reference).toMatch(/isDirectory: true/)
    expect(info.ours).toMatch(/^Access denied - symbolic link not followed: /)
    untouched()
  })

  it("links out and dangling links out: both servers refuse (the reference's 2025 fixes hold)", async () => {
    for (const [tool, args] of [
      ["read_text_file", (r: string) => ({ path: `${r}/outlink` })],
      ["read_text_file", (r: string) => ({ path: `${r}/outdir/secret.txt` })],
      ["list_directory", (r: string) => ({ path: `${r}/outdir` })],
      ["write_file", (r: string) => ({ path: `${r}/dangling`, content: "x" })],
      ["write_file", (r: string) => ({ path: `${r}/outdir/new.txt`, content: "x" })],
      ["create_directory", (r: string) => ({ path: `${r}/outdir/new` })],
      ["edit_file", (r: string) => ({ path: `${r}/outlink`, edits: [{ oldText: "TOP", newText: "X" }] })],
      ["move_file", (r: string) => ({ source: `${r}/plain.txt`, destination: `${r}/outdir/moved.txt` })]
    ] as const) {
      const r = await both(tool, args)
      expect(r.reference, `${tool} reference`).not.toContain(SECRET)
      expect(r.reference, `${tool} reference`).toMatch(/^(Access denied|Parent directory does not exist)/)
      expect(r.ours, `${tool} ours`).toMatch(/^Access denied - symbolic link not followed: /)
    }
    untouched()
  })

  it("a FIFO: the reference blocks until the client gives up, pinnedfs refuses at once", async () => {
    const timedOut = await reference.client
      .callTool({ name: "read_text_file", arguments: { path: `${t.reference}/fifo` } }, undefined, { timeout: 1500 })
      .then(
        () => "answered",
        (e: unknown) => (e instanceof Error ? e.message : String(e))
      )
    expect(timedOut).toMatch(/timed out/i)
    expect(textOf(await ours.call("read_text_file", { path: `${t.ours}/fifo` }))).toBe(
      `Access denied - not a regular file: ${t.ours}/fifo is a FIFO, socket or device (pinnedfs does not open one for reading or writing)`
    )
    expect(textOf(await ours.call("write_file", { path: `${t.ours}/fifo`, content: "x" }))).toMatch(/^Access denied - not a regular file: /)
  }, 30_000)
})
