/**
 * The read streams' read-ahead (src/root/streamsReadAhead.ts): the chunks fs.createReadStream emits,
 * read in larger reads with one ahead, never more than that unconsumed, and no read once the stream
 * is destroyed. Against a scripted reader (each read answered when the test says) for the exact
 * bounds, and through real handles under both strategies for the bytes and chunk sizes.
 */
import * as fs from "node:fs"
import { Readable } from "node:stream"
import { describe, expect, it } from "vitest"
import { PinnedRoot } from "../../src/index.ts"
import { type PinnedFileHandle, readChunkOf } from "../../src/root/handle.ts"
import { ReadAhead, type ReadChunk, readAheadBytes } from "../../src/root/streamsReadAhead.ts"
import { strategies } from "../support/strategies.ts"
import { openDescriptorCount, scratch } from "../support/tree.ts"

/** Lets every callback and timer-free continuation queued so far run. */
const turns = async (n = 20) => {
  for (let i = 0; i < n; i++) await new Promise((done) => setImmediate(done))
}

const chunkSizes = async (r: Readable): Promise<{ sizes: Array<number>; bytes: Buffer }> => {
  const chunks: Array<Buffer> = []
  for await (const c of r) chunks.push(c as Buffer)
  if (!r.closed) await new Promise((done) => r.once("close", done))
  return { sizes: chunks.map((c) => c.length), bytes: Buffer.concat(chunks) }
}

/** A file of `size` bytes of a pattern, so a misplaced chunk shows in the bytes. */
const pattern = (size: number) => Buffer.from(Array.from({ length: size }, (_, i) => (i * 31 + (i >> 16)) % 253))

/** A reader whose reads the test answers one by one, recording what was asked and when. */
const scripted = (file: Buffer) => {
  const asked: Array<{ length: number; position: number; answer: () => void }> = []
  let inFlight = 0
  const read = (buffer: Uint8Array, offset: number, length: number, position: number, done: (e: Error | null, n?: number) => void) => {
    inFlight++
    asked.push({
      length,
      position,
      answer: () => {
        inFlight--
        const n = file.copy(buffer, offset, Math.min(position, file.length), Math.min(position + length, file.length))
        done(null, n)
      }
    })
  }
  return { read, asked, inFlight: () => inFlight }
}

describe("the read-ahead, against a scripted reader", () => {
  const hwm = 65536
  /** A Readable reading through `read` as the pinned read streams do. */
  const over = (read: ReadChunk, start: number, end: number | undefined): Readable => {
    let ahead: ReadAhead | undefined
    const stream: Readable = new Readable({
      highWaterMark: hwm,
      read(size) {
        ahead ??= new ReadAhead(read, start, end, stream)
        ahead.want(size)
      }
    })
    return stream
  }

  it("keeps at most the read being handed out and one ahead unconsumed, whatever the consumer does", async () => {
    const file = pattern(5 * readAheadBytes + 123)
    const r = scripted(file)
    const stream = over(r.read, 0, undefined)
    stream.pause()
    stream.read(0)
    let answered = 0
    let consumed = 0
    const got: Array<Buffer> = []
    // A consumer that never reads: reads are answered as they come, and no more are asked.
    for (let step = 0; step < 10 && answered < r.asked.length; step++) {
      r.asked[answered++]!.answer()
      await turns(3)
    }
    const requested = () => r.asked.reduce((sum, a) => sum + a.length, 0)
    expect({ reads: r.asked.length, requested: requested() }).toEqual({ reads: 2, requested: 2 * readAheadBytes })
    // Then a consumer taking one chunk at a time: what was asked and not consumed stays bounded.
    let worst = 0
    for (let step = 0; step < 1000; step++) {
      const c = stream.read() as Buffer | null
      if (c !== null) {
        got.push(c)
        consumed += c.length
      } else if (answered < r.asked.length) {
        r.asked[answered++]!.answer()
      } else if (stream.readableEnded || consumed === file.length) {
        break
      }
      await turns(2)
      worst = Math.max(worst, requested() - consumed)
      expect(r.inFlight()).toBeLessThanOrEqual(1)
    }
    expect(Buffer.concat(got).equals(file)).toBe(true)
    expect(new Set(got.slice(0, -1).map((c) => c.length))).toEqual(new Set([hwm]))
    expect(worst).toBeLessThanOrEqual(2 * readAheadBytes)
    // Every read starts where the one before ended (the last, short one at the end of the file),
    // and asks a whole number of chunks.
    for (let i = 1; i < r.asked.length; i++) {
      const before = r.asked[i - 1]!
      expect(r.asked[i]!.position).toBe(Math.min(before.position + before.length, file.length))
    }
    for (const a of r.asked) expect(a.length % hwm).toBe(0)
  })

  it("asks nothing once destroyed, even when a read in flight lands afterwards", async () => {
    const file = pattern(3 * readAheadBytes)
    const r = scripted(file)
    const stream = over(r.read, 0, undefined)
    const chunks: Array<Buffer> = []
    stream.on("data", (c: Buffer) => chunks.push(c))
    await turns(3)
    r.asked[0]!.answer()
    await turns(3)
    expect(r.asked.length).toBe(2)
    expect(r.inFlight()).toBe(1)
    stream.destroy()
    const askedAtDestroy = r.asked.length
    const pushedAtDestroy = chunks.length
    r.asked[1]!.answer()
    await turns(10)
    expect({ asked: r.asked.length, pushed: chunks.length, destroyed: stream.destroyed }).toEqual({
      asked: askedAtDestroy,
      pushed: pushedAtDestroy,
      destroyed: true
    })
  })

  it("cuts reads at end and asks nothing past it", async () => {
    const file = pattern(4 * readAheadBytes)
    const r = scripted(file)
    const start = readAheadBytes - 10
    const end = 2 * readAheadBytes + 5
    const stream = over(r.read, start, end)
    const chunks: Array<Buffer> = []
    stream.on("data", (c: Buffer) => chunks.push(c))
    const ended = new Promise((done) => stream.once("end", done))
    let answered = 0
    for (let step = 0; step < 40 && !stream.readableEnded; step++) {
      if (answered < r.asked.length) r.asked[answered++]!.answer()
      await turns(3)
    }
    await ended
    expect(answered).toBe(r.asked.length)
    expect(Buffer.concat(chunks).equals(file.subarray(start, end + 1))).toBe(true)
    expect(Math.max(...r.asked.map((a) => a.position + a.length))).toBe(end + 1)
  })
})

describe.each(strategies)("read streams read ahead (%s)", (strategy) => {
  const size = 2 * readAheadBytes + 3 * 65536 + 17
  const setup = async () => {
    const s = scratch()
    fs.writeFileSync(s.abs("big.bin"), pattern(size))
    fs.writeFileSync(s.abs("exact.bin"), pattern(2 * readAheadBytes))
    fs.writeFileSync(s.abs("empty.bin"), "")
    return { s, root: await PinnedRoot.open(s.root, { strategy }) }
  }

  it("emits the chunks fs.createReadStream emits, for start, end and highWaterMark across read boundaries", async () => {
    const { s, root } = await setup()
    const before = openDescriptorCount()
    const cases: Array<[string, object]> = [
      ["big.bin", {}],
      ["exact.bin", {}],
      ["empty.bin", {}],
      ["big.bin", { start: readAheadBytes - 3 }],
      ["big.bin", { start: 100, end: readAheadBytes }],
      ["big.bin", { start: readAheadBytes, end: 2 * readAheadBytes - 1 }],
      ["big.bin", { end: size + 1000 }],
      ["big.bin", { start: size + 5 }],
      ["big.bin", { highWaterMark: 100_000 }],
      ["big.bin", { highWaterMark: 3 * readAheadBytes }],
      ["exact.bin", { highWaterMark: 777, start: 12_345, end: readAheadBytes + 54_321 }]
    ]
    for (const [name, o] of cases) {
      const mine = await chunkSizes(root.createReadStream(name, o))
      const theirs = await chunkSizes(fs.createReadStream(s.abs(name), o))
      expect({ name, o, sizes: mine.sizes, equal: mine.bytes.equals(theirs.bytes) }).toEqual({ name, o, sizes: theirs.sizes, equal: true })
    }
    expect(openDescriptorCount()).toBe(before)
    root.close()
  })

  it("destroyed mid-read: no read after it, the handle closes once the read in flight lands", async () => {
    const { root } = await setup()
    const before = openDescriptorCount()
    const h = await root.open("big.bin")
    let destroyed = false
    let afterDestroy = 0
    let calls = 0
    const real = h[readChunkOf].bind(h)
    Object.defineProperty(h, readChunkOf, {
      value: (...a: Parameters<PinnedFileHandle[typeof readChunkOf]>) => {
        calls++
        if (destroyed) afterDestroy++
        real(...a)
      }
    })
    const stream = h.createReadStream()
    const first = await new Promise<Buffer>((done) => stream.once("data", done))
    expect(first.length).toBe(65536)
    stream.destroy()
    destroyed = true
    await new Promise((done) => stream.once("close", done))
    await h.close()
    await turns(10)
    expect({ afterDestroy, calledAtLeast: calls >= 1 }).toEqual({ afterDestroy: 0, calledAtLeast: true })
    // A stream that owns its handle closes it on destroy, with its read ahead in flight.
    const own = root.createReadStream("big.bin")
    await new Promise((done) => own.once("data", done))
    own.destroy()
    await new Promise((done) => own.once("close", done))
    expect(openDescriptorCount()).toBe(before)
    root.close()
  })
})
