/**
 * move_file, where pinnedfs and the reference part ways:
 * - a destination created by someone else between the reference's check (lstat) and its rename is
 *   replaced, and that file is lost; pinnedfs renames with RENAME_NOREPLACE, so the same race meets
 *   "Destination already exists" and nothing is lost (a bounded race, a victim process creating
 *   the destination over and over, its losses counted by the victim itself);
 * - moving a link: the reference moves what the link points at and leaves the link dangling;
 *   pinnedfs moves the link;
 * - two allowed directories, neither inside the other: the reference renames between them,
 *   pinnedfs refuses (EXDEV: no handle holds both); nested ones share the outer directory's root;
 * - the allowed directory itself as the source, with nothing allowed around it: refused.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { strategies } from "../support/strategies.ts"
import { type Server, startOurs, startReference, textOf } from "./support/servers.ts"
import { type Twins, twins } from "./support/twins.ts"

/**
 * A process that creates `dest` (O_EXCL, its own content), looks at it, and removes it, in a loop
 * until its stdin closes; answers how many of its files it created and how many it found replaced
 * by someone else's file before it removed them.
 */
const victim = (dest: string) => {
  const script = `const fs = require("fs")
let created = 0, replaced = 0, running = true
process.stdin.on("end", () => { running = false })
process.stdin.resume()
const spin = () => {
  for (let i = 0; i < 200 && running; i++) {
    let fd
    try { fd = fs.openSync(${JSON.stringify(dest)}, "wx") } catch { continue }
    fs.writeSync(fd, "victim"); fs.closeSync(fd); created++
    let now = ""
    try { now = fs.readFileSync(${JSON.stringify(dest)}, "utf8") } catch {}
    if (now === "victim") fs.rmSync(${JSON.stringify(dest)}, { force: true })
    else if (now !== "") replaced++
  }
  if (running) setImmediate(spin)
  else console.log(JSON.stringify({ created, replaced }))
}
spin()`
  const child = spawn(process.execPath, ["-e", script], { stdio: ["pipe", "pipe", "inherit"] })
  let out = ""
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString()
  })
  const done = new Promise<{ created: number; replaced: number }>((resolve) => child.on("close", () => resolve(JSON.parse(out))))
  return { stop: () => (child.stdin.end(), done) }
}

describe.each(strategies)("move_file (%s)", (strategy) => {
  let t: Twins
  let ours: Server
  let reference: Server
  beforeAll(async () => {
    t = twins()
    t.make({ "a/x.txt": "x", "b/y.txt": "y", "target.txt": "target", "race/": "" })
    t.both((root) => fs.symlinkSync("target.txt", path.join(root, "link")))
    ;[ours, reference] = await Promise.all([
      startOurs(["--strategy", strategy, path.join(t.ours, "a"), path.join(t.ours, "b"), t.ours]),
      startReference([path.join(t.reference, "a"), path.join(t.reference, "b"), t.reference])
    ])
  }, 60_000)
  afterAll(async () => {
    await Promise.all([ours?.close(), reference?.close()])
    t?.cleanup()
  })

  /** Moves src to dest again and again while the victim creates dest; answers what happened. */
  const race = async (server: Server, root: string) => {
    const src = path.join(root, "race", "src.txt")
    const dest = path.join(root, "race", "dest.txt")
    const v = victim(dest)
    const outcomes: Record<string, number> = {}
    const deadline = Date.now() + 10_000
    for (let i = 0; i < 400 && Date.now() < deadline; i++) {
      fs.writeFileSync(src, "source")
      const text = textOf(await server.call("move_file", { source: src, destination: dest }))
      const kind = text.startsWith("Successfully moved") ? "moved" : text.startsWith("Destination already exists") ? "exists" : text
      outcomes[kind] = (outcomes[kind] ?? 0) + 1
      // The moved file, if it is the one there now, goes; a victim's file is the victim's to remove.
      try {
        if (fs.readFileSync(dest, "utf8") === "source") fs.rmSync(dest)
      } catch {
        // not there: nothing to clean
      }
    }
    return { ...(await v.stop()), outcomes }
  }

  it("the reference replaces a destination created between its check and its rename; pinnedfs never does", async () => {
    // The reference first: it must lose a victim's file for the race to show anything.
    let control = { created: 0, replaced: 0, outcomes: {} as Record<string, number> }
    for (let round = 0; round < 5 && control.replaced === 0; round++) control = await race(reference, t.reference)
    console.log(`move_file race, reference: ${JSON.stringify(control)}`)
    expect(control.replaced, JSON.stringify(control)).toBeGreaterThan(0)
    const mine = await race(ours, t.ours)
    console.log(`move_file race, pinnedfs (${strategy}): ${JSON.stringify(mine)}`)
    expect(mine.replaced, JSON.stringify(mine)).toBe(0)
    expect(mine.created).toBeGreaterThan(0)
    expect(mine.outcomes["exists"], "the victim's file met the rename").toBeGreaterThan(0)
    expect(
      Object.keys(mine.outcomes).every((k) => k === "moved" || k === "exists"),
      JSON.stringify(mine.outcomes)
    ).toBe(true)
  }, 120_000)

  it("moves a link itself, where the reference moves what it points at", async () => {
    const move = (root: string) => ({ source: path.join(root, "link"), destination: path.join(root, "moved-link") })
    expect(textOf(await reference.call("move_file", move(t.reference)))).toBe(
      `Successfully moved ${t.reference}/link to ${t.reference}/moved-link`
    )
    expect(fs.readFileSync(path.join(t.reference, "moved-link"), "utf8")).toBe("target")
    expect(fs.lstatSync(path.join(t.reference, "moved-link")).isSymbolicLink()).toBe(false)
    expect(fs.existsSync(path.join(t.reference, "target.txt"))).toBe(false)
    expect(textOf(await ours.call("move_file", move(t.ours)))).toBe(`Successfully moved ${t.ours}/link to ${t.ours}/moved-link`)
    expect(fs.readlinkSync(path.join(t.ours, "moved-link"))).toBe("target.txt")
    expect(fs.readFileSync(path.join(t.ours, "target.txt"), "utf8")).toBe("target")
  })

  it("moves between nested allowed directories through the outer one", async () => {
    expect(
      textOf(await ours.call("move_file", { source: path.join(t.ours, "a", "x.txt"), destination: path.join(t.ours, "b", "x.txt") }))
    ).toBe(`Successfully moved ${t.ours}/a/x.txt to ${t.ours}/b/x.txt`)
    expect(fs.readFileSync(path.join(t.ours, "b", "x.txt"), "utf8")).toBe("x")
  })

  it("refuses a move between two allowed directories no handle holds both of, and the allowed directory itself", async () => {
    const base = path.dirname(t.ours)
    fs.mkdirSync(path.join(base, "left"))
    fs.mkdirSync(path.join(base, "right"))
    fs.writeFileSync(path.join(base, "left", "f.txt"), "f")
    const s = await startOurs(["--strategy", strategy, path.join(base, "left"), path.join(base, "right")])
    try {
      expect(
        textOf(await s.call("move_file", { source: path.join(base, "left", "f.txt"), destination: path.join(base, "right", "f.txt") }))
      ).toBe(
        `EXDEV: cross-device link not permitted, rename '${base}/left/f.txt' -> '${base}/right/f.txt' (pinnedfs moves within one allowed directory: these two are pinned separately and no handle holds both)`
      )
      expect(textOf(await s.call("move_file", { source: path.join(base, "left"), destination: path.join(base, "right", "left") }))).toMatch(
        /^EXDEV: cross-device link not permitted/
      )
      expect(textOf(await s.call("move_file", { source: path.join(base, "left"), destination: path.join(base, "left", "inner") }))).toMatch(
        /^EINVAL: invalid argument, rename '.*\/left' -> '.*\/left\/inner' \(pinnedfs: rename from the root itself: the root cannot move\)$/
      )
      expect(fs.readdirSync(path.join(base, "left"))).toEqual(["f.txt"])
      expect(fs.readdirSync(path.join(base, "right"))).toEqual([])
    } finally {
      await s.close()
    }
  })
})
