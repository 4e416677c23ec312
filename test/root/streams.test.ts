/**
 * PinnedRoot.createReadStream / createWriteStream and the handle's streams: the same bytes as
 * node:fs' streams on a twin tree, every refusal of open, and an atomic write stream that leaves
 * the old file when it is destroyed halfway or its process is killed (SIGKILL) halfway.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type PinnedFsError, PinnedRoot } from "../../src/index.ts"
import { strategies } from "../support/strategies.ts"
import { transpileSources } from "../support/transpile.ts"
import { mkfifo, openDescriptorCount, scratch } from "../support/tree.ts"

const child = fileURLToPath(new URL("./streams.child.mjs", import.meta.url))
let transpiled = ""
// Transpiling every source takes a while on a loaded machine.
beforeAll(() => {
  transpiled = transpileSources("streams")
}, 180_000)
afterAll(() => fs.rmSync(transpiled, { recursive: true, force: true }))

const collect = async (r: Readable): Promise<Buffer> => {
  const chunks: Array<Buffer> = []
  for await (const c of r) chunks.push(c as Buffer)
  // The stream closes its handle on destroy; 'close' comes once the descriptor is closed.
  if (!r.closed) await new Promise((done) => r.once("close", done))
  return Buffer.concat(chunks)
}

const streamError = (stream: NodeJS.EventEmitter): Promise<PinnedFsError> =>
  new Promise((resolve) => stream.once("error", (e: PinnedFsError) => resolve(e)))

const temporaries = (dir: string) => fs.readdirSync(dir).filter((n) => /^\.pinnedfs-[0-9a-f]{16}\.tmp$/.test(n))

const content = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7) % 251))

describe.each(strategies)("streams (%s)", (strategy) => {
  const setup = async () => {
    const s = scratch()
    s.make({ "d/": "" })
    fs.writeFileSync(s.abs("data.bin"), content)
    fs.writeFileSync(s.abs("old.txt"), "old content")
    const root = await PinnedRoot.open(s.root, { strategy })
    return { s, root }
  }

  it("reads the bytes fs.createReadStream reads, for each start, end and highWaterMark", async () => {
    const { s, root } = await setup()
    const before = openDescriptorCount()
    for (const o of [{}, { start: 5 }, { start: 10, end: 10 }, { end: 65536 }, { start: 1000, end: 250_000, highWaterMark: 777 }]) {
      const mine = await collect(root.createReadStream("data.bin", o))
      const theirs = await collect(fs.createReadStream(s.abs("data.bin"), o))
      expect({ o, equal: mine.equals(theirs), length: mine.length }).toEqual({ o, equal: true, length: theirs.length })
    }
    const h = await root.open("data.bin")
    expect((await collect(h.createReadStream({ start: 3, end: 9 }))).equals(content.subarray(3, 10))).toBe(true)
    await h.close()
    expect(openDescriptorCount()).toBe(before)
    root.close()
  })

  it("writes in place with each flag as fs.createWriteStream does, and atomically on finish", async () => {
    const { s, root } = await setup()
    const twin = path.join(path.dirname(s.root), "twin")
    fs.mkdirSync(twin)
    fs.writeFileSync(path.join(twin, "old.txt"), "old content")
    const before = openDescriptorCount()
    for (const flags of ["w", "a", "r+"] as const) {
      fs.writeFileSync(s.abs("old.txt"), "old content")
      fs.writeFileSync(path.join(twin, "old.txt"), "old content")
      await pipeline(Readable.from([Buffer.from("new "), Buffer.from("bytes")]), root.createWriteStream("old.txt", { flags }))
      await pipeline(
        Readable.from([Buffer.from("new "), Buffer.from("bytes")]),
        fs.createWriteStream(path.join(twin, "old.txt"), { flags })
      )
      expect(fs.readFileSync(s.abs("old.txt"), "utf8")).toBe(fs.readFileSync(path.join(twin, "old.txt"), "utf8"))
    }
    fs.chmodSync(s.abs("old.txt"), 0o640)
    const ino = fs.statSync(s.abs("old.txt")).ino
    await pipeline(Readable.from([content]), root.createWriteStream("old.txt", { atomic: true }))
    expect(fs.readFileSync(s.abs("old.txt")).equals(content)).toBe(true)
    expect(fs.statSync(s.abs("old.txt")).ino).not.toBe(ino)
    expect(fs.statSync(s.abs("old.txt")).mode & 0o777).toBe(0o640)
    await pipeline(Readable.from([Buffer.from("fresh")]), root.createWriteStream("d/fresh.txt", { atomic: true, flags: "wx" }))
    expect(fs.readFileSync(s.abs("d/fresh.txt"), "utf8")).toBe("fresh")
    const taken = root.createWriteStream("d/fresh.txt", { atomic: true, flags: "wx" })
    expect((await streamError(taken)).code).toBe("EEXIST")
    expect(temporaries(s.root)).toEqual([])
    expect(temporaries(s.abs("d"))).toEqual([])
    expect(openDescriptorCount()).toBe(before)
    root.close()
  })

  it("an atomic stream destroyed or failed halfway leaves the old file and no temporary", async () => {
    const { s, root } = await setup()
    const before = openDescriptorCount()
    const w = root.createWriteStream("old.txt", { atomic: true })
    await new Promise<void>((done) => w.write(Buffer.alloc(100_000, 1), () => done()))
    // The new content is really on its way: a temporary holds it beside the target.
    expect(temporaries(s.root)).toHaveLength(1)
    w.destroy()
    await new Promise((done) => w.once("close", done))
    expect(fs.readFileSync(s.abs("old.txt"), "utf8")).toBe("old content")
    expect(temporaries(s.root)).toEqual([])
    const failing = root.createWriteStream("old.txt", { atomic: true })
    await new Promise<void>((done) => failing.write(Buffer.from("partial"), () => done()))
    failing.destroy(new Error("upstream failed"))
    expect((await streamError(failing)).message).toBe("upstream failed")
    expect(fs.readFileSync(s.abs("old.txt"), "utf8")).toBe("old content")
    expect(temporaries(s.root)).toEqual([])
    expect(openDescriptorCount()).toBe(before)
    root.close()
  })

  it("an atomic stream whose process is killed halfway leaves the old file", async () => {
    const { s } = await setup()
    const proc = spawn(process.execPath, [child, transpiled, strategy, s.root, "old.txt"], { stdio: ["ignore", "pipe", "pipe"] })
    let stderr = ""
    proc.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    const written = await new Promise<number>((resolve) => {
      let out = ""
      proc.stdout.on("data", (d: Buffer) => {
        out += d.toString()
        const k = Math.max(0, ...[...out.matchAll(/W (\d+)\n/g)].map((m) => Number(m[1])))
        if (k >= 3) {
          proc.kill("SIGKILL")
          resolve(k)
        }
      })
      proc.once("exit", () => resolve(0))
    })
    const signal = await new Promise((done) =>
      proc.exitCode !== null || proc.signalCode !== null ? done(proc.signalCode) : proc.once("exit", (_c, sig) => done(sig))
    )
    expect({ signal, stderr }).toEqual({ signal: "SIGKILL", stderr: "" })
    expect(written).toBeGreaterThanOrEqual(3)
    expect(fs.readFileSync(s.abs("old.txt"), "utf8")).toBe("old content")
    // The kill left the temporary it was writing (named; documented as safe to delete), holding
    // at least the chunks the child reported: the attack was live.
    const left = temporaries(s.root)
    expect(left).toHaveLength(1)
    expect(fs.statSync(s.abs(left[0]!)).size).toBeGreaterThanOrEqual(3 << 20)
  })

  it("is refused as open is: links, hard links, FIFOs, escapes; positive controls reach outside", async () => {
    const { s, root } = await setup()
    fs.symlinkSync(s.secret, s.abs("leaf"))
    fs.symlinkSync(s.outside, s.abs("linkdir"))
    fs.linkSync(s.secret, s.abs("hard"))
    mkfifo(s.abs("fifo"))
    const name = path.basename(s.outside)
    expect((await collect(fs.createReadStream(s.abs("leaf")))).toString()).toBe("TOP SECRET")
    expect((await collect(fs.createReadStream(s.abs("linkdir/secret.txt")))).toString()).toBe("TOP SECRET")
    expect((await collect(fs.createReadStream(s.abs("hard")))).toString()).toBe("TOP SECRET")
    const before = openDescriptorCount()
    const cases = [
      ["leaf", "symlink"],
      ["linkdir/secret.txt", "symlink"],
      ["hard", "hardlink"],
      ["fifo", "notregular"],
      [`../${name}/secret.txt`, "escape"]
    ] as const
    for (const [p, refusal] of cases) {
      expect({ p, r: (await streamError(root.createReadStream(p))).refusal }).toEqual({ p, r: refusal })
      for (const atomic of [false, true]) {
        const e = await streamError(root.createWriteStream(p, { atomic }))
        expect({ p, atomic, r: e.refusal }).toEqual({ p, atomic, r: refusal })
      }
    }
    expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
    expect(fs.lstatSync(s.abs("leaf")).isSymbolicLink()).toBe(true)
    expect(temporaries(s.root)).toEqual([])
    expect(openDescriptorCount()).toBe(before)
    root.close()
  })

  it("refuses bad options with a typed error, before anything is opened", async () => {
    const { root } = await setup()
    const bad: Array<() => unknown> = [
      () => root.createReadStream("data.bin", { start: -1 }),
      () => root.createReadStream("data.bin", { start: 5, end: 4 }),
      () => root.createReadStream("data.bin", { highWaterMark: 0 }),
      () => root.createReadStream("data.bin", { encoding: "utf8" } as object),
      () => root.createReadStream(7 as unknown as string),
      () => root.createWriteStream("old.txt", { flags: "w+" as "w" }),
      () => root.createWriteStream("old.txt", { atomic: true, flags: "a" }),
      () => root.createWriteStream("old.txt", { atomic: "yes" as unknown as boolean }),
      () => root.createWriteStream("/etc/passwd")
    ]
    for (const f of bad) {
      let e: unknown
      try {
        f()
      } catch (u) {
        e = u
      }
      expect((e as PinnedFsError).reason).toBe("BadArgument")
    }
    expect(fs.readFileSync(path.join(root.path, "old.txt"), "utf8")).toBe("old content")
    root.close()
  })
})
