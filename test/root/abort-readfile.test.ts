/**
 * An abort that lands while a large readFile is under way stops it between chunks, on the root and
 * on a handle. The test waits until the read has demonstrably begun (the descriptor's offset, read
 * from /proc/self/fdinfo, is past zero and short of the end: the first chunk is in), then aborts,
 * so it cannot pass on a pre-aborted call or on one that finished first. Then it asserts that the
 * reading itself stopped, not only the promise: the process's read count (/proc/self/io `rchar`)
 * grows by at most about a chunk after the abort, where reading on to the end would add the rest.
 */
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { PinnedRoot } from "../../src/index.ts"
import { strategies } from "../support/strategies.ts"
import { scratch } from "../support/tree.ts"

const size = 128 * 1024 * 1024

/** The descriptors of this process open on `file`, by inode. */
const descriptorsOn = (file: string): Array<number> => {
  const { ino, dev } = fs.statSync(file)
  const out: Array<number> = []
  for (const name of fs.readdirSync("/proc/self/fd")) {
    try {
      const st = fs.statSync(`/proc/self/fd/${name}`)
      if (st.ino === ino && st.dev === dev) out.push(Number(name))
    } catch {
      // A descriptor closed while the directory was read.
    }
  }
  return out
}

/** The offset of descriptor `fd`, or -1 once it is gone. */
const offsetOf = (fd: number): number => {
  try {
    const m = /^pos:\s+(\d+)/m.exec(fs.readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))
    return m === null ? -1 : Number(m[1])
  } catch {
    return -1
  }
}

/** Bytes this process has read so far, every thread counted (/proc/self/io). */
const readSoFar = (): number => Number(/^rchar:\s+(\d+)/m.exec(fs.readFileSync("/proc/self/io", "utf8"))?.[1] ?? Number.NaN)

/** What an abort after the first chunk may still let through: the chunk in flight, and slack. */
const oneChunkAndSlack = 24 * 1024 * 1024

/**
 * Starts `read(signal)`, waits (bounded) until some descriptor on `file` has an offset strictly
 * inside the file, aborts, and answers the outcome and whether the abort came mid-read.
 */
const abortMidRead = async (file: string, read: (signal: AbortSignal) => Promise<unknown>, keep = 0) => {
  const c = new AbortController()
  let settled = false
  const p = read(c.signal).then(
    (v) => ({ ok: true as const, v }),
    (e: unknown) => ({ ok: false as const, e })
  )
  void p.then(() => (settled = true))
  let midway = false
  for (let spin = 0; spin < 200_000 && !settled && !midway; spin++) {
    for (const fd of descriptorsOn(file)) {
      const at = offsetOf(fd)
      if (at > 0 && at < size) midway = true
    }
    if (!midway) await new Promise((r) => setImmediate(r))
  }
  const atAbort = readSoFar()
  c.abort()
  const outcome = await p
  // The worker may still be reading after the promise settled: wait (bounded) for its descriptor to go.
  for (let spin = 0; spin < 200_000 && descriptorsOn(file).length > keep; spin++) await new Promise((r) => setImmediate(r))
  return { midway, outcome, after: readSoFar() - atAbort }
}

/** A read aborted midway: it stopped within a chunk and slack, and rejected with Node's AbortError. */
const expectStoppedMidRead = (after: number, outcome: { ok: true } | { ok: false; e: unknown }) => {
  expect(after, "bytes read after the abort").toBeLessThan(oneChunkAndSlack)
  expect(outcome.ok, "an abort mid-read must reject").toBe(false)
  const e = (outcome as { e: Error & { code?: string } }).e
  expect(e.name).toBe("AbortError")
  expect(e.code).toBe("ABORT_ERR")
}

describe.each(strategies)("abort inside a large readFile (%s)", (strategy) => {
  const setup = async () => {
    const s = scratch()
    // Real blocks, not a hole: a sparse file reads as fast as memory copies and could finish first.
    const chunk = Buffer.alloc(8 * 1024 * 1024, 0x61)
    const fd = fs.openSync(s.abs("big.bin"), "w")
    for (let at = 0; at < size; at += chunk.length) fs.writeSync(fd, chunk)
    fs.closeSync(fd)
    const root = await PinnedRoot.open(s.root, { strategy })
    return { s, root }
  }

  it("PinnedRoot.readFile stops between chunks once aborted mid-read", async () => {
    const { s, root } = await setup()
    let stopped = 0
    // Bounded rounds: a round whose abort came only after the end is not counted.
    for (let round = 0; round < 6 && stopped === 0; round++) {
      const { midway, outcome, after } = await abortMidRead(s.abs("big.bin"), (signal) =>
        root.readFile("big.bin", { limit: size + 1, signal })
      )
      if (!midway) continue
      expectStoppedMidRead(after, outcome)
      stopped++
    }
    expect(stopped).toBeGreaterThan(0)
    root.close()
  }, 120_000)

  it("PinnedFileHandle.readFile stops between chunks once aborted mid-read", async () => {
    const { s, root } = await setup()
    let stopped = 0
    for (let round = 0; round < 6 && stopped === 0; round++) {
      const handle = await root.open("big.bin")
      const { midway, outcome, after } = await abortMidRead(s.abs("big.bin"), (signal) => handle.readFile({ limit: size + 1, signal }), 1)
      const offset = offsetOf(handle.fd)
      await handle.close()
      if (!midway) continue
      expect(offset).toBeLessThan(size)
      expectStoppedMidRead(after, outcome)
      stopped++
    }
    expect(stopped).toBeGreaterThan(0)
    root.close()
  }, 120_000)

  it("a handle's readFile with a signal that never fires reads it all; a pre-aborted one reads nothing", async () => {
    const { s, root } = await setup()
    await using handle = await root.open("big.bin")
    const whole = await handle.readFile({ limit: size + 1, signal: new AbortController().signal })
    expect(whole.length).toBe(size)
    expect(whole.equals(fs.readFileSync(s.abs("big.bin")))).toBe(true)
    const c = new AbortController()
    c.abort()
    await using again = await root.open("big.bin")
    const e = await again.readFile({ signal: c.signal }).then(
      () => undefined,
      (u: unknown) => u as Error
    )
    expect(e?.name).toBe("AbortError")
    expect(offsetOf(again.fd)).toBe(0)
    root.close()
  }, 120_000)
})
