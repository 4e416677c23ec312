/**
 * The reading side of a pinned read stream: the chunks `fs.ReadStream` emits, read from the file in
 * fewer, larger reads, the next one already on the thread pool while the current one is handed on.
 *
 * `fs.ReadStream` reads one chunk per thread-pool round trip, and starts it only when the stream
 * asks, so the thread pool and the consumer take turns waiting for each other. A round trip costs
 * more than copying 64 KiB out of the page cache, so reading 1 MiB at a time halves the CPU a
 * 1 GiB stream costs, and issuing the next read as soon as one is taken lets the copy overlap
 * the consumer's work.
 *
 * What the stream emits does not change: each chunk is the size the stream asked for (its high-water
 * mark), cut at `end` and at the end of the file, as `fs.ReadStream` cuts it. A read is a whole
 * number of chunks, at most 1 MiB (or one chunk, when a chunk is larger), and the chunks are views
 * into it, as Node's own read streams once sliced a shared pool. What is read and not yet pushed is
 * bounded: the read being handed out and at most one read ahead of it, so backpressure holds as in
 * Node (the stream's own buffer bounds the rest). Nothing is read once the stream is destroyed.
 * Every read goes through the handle's gate, which refuses a closed handle and makes `close()` wait
 * for a read in flight, so no read ever lands on a closed or reused descriptor number.
 *
 * @internal
 */
import type { Readable } from "node:stream"

/** One read through a handle's gate (`PinnedFileHandle[readChunkOf]`). */
export type ReadChunk = (
  buffer: Uint8Array,
  offset: number,
  length: number,
  position: number,
  done: (e: Error | null, n?: number) => void
) => void

/** The largest read made for chunks smaller than it. */
export const readAheadBytes = 1024 * 1024

interface Slot {
  readonly buffer: Buffer
  settled: boolean
  error: Error | null
  /** Bytes the read gave. */
  n: number
  /** Bytes of them already pushed. */
  given: number
}

/** @internal */
export class ReadAhead {
  readonly #read: ReadChunk
  readonly #end: number | undefined
  readonly #stream: Readable
  /** Where the next read starts: the end of what the reads so far gave. */
  #position: number
  #chunk = 1
  /** The read being handed out, chunk by chunk. */
  #current: Slot | undefined
  /** The one read ahead of it: in flight, or settled and not yet taken. */
  #next: Slot | undefined
  /** The stream asked while the read ahead was still in flight: hand it out the moment it lands. */
  #waiting = false

  constructor(read: ReadChunk, start: number, end: number | undefined, stream: Readable) {
    this.#read = read
    this.#position = start
    this.#end = end
    this.#stream = stream
  }

  /** The stream's `_read(size)`: one chunk of `size` bytes, now or when its read lands. */
  want(size: number): void {
    this.#chunk = size
    if (this.#current === undefined && this.#next === undefined && !this.#issue()) return void this.#stream.push(null)
    // Bytes at hand are pushed on the next tick, as a read landing would push them: pushed inside
    // `_read`, they would join the chunk `read()` is returning, and the consumer would see two
    // chunks as one where fs.ReadStream gives two.
    if (this.#current !== undefined || this.#next!.settled) return void process.nextTick(() => this.#ready())
    this.#waiting = true
  }

  #ready(): void {
    if (this.#stream.destroyed) return
    if (this.#current !== undefined) this.#give()
    else this.#take()
  }

  /** Starts the read at the current position; false when `end` is already passed. */
  #issue(): boolean {
    const chunks = Math.max(1, Math.floor(readAheadBytes / this.#chunk))
    const whole = chunks * this.#chunk
    const length = this.#end === undefined ? whole : Math.min(whole, this.#end + 1 - this.#position)
    if (length <= 0) return false
    const slot: Slot = { buffer: Buffer.allocUnsafeSlow(length), settled: false, error: null, n: 0, given: 0 }
    // Set before the read: a closed handle's gate answers at once, inside this call.
    this.#next = slot
    this.#read(slot.buffer, 0, length, this.#position, (e, n = 0) => {
      slot.settled = true
      slot.error = e
      slot.n = n
      if (this.#stream.destroyed || slot !== this.#next || !this.#waiting) return
      this.#waiting = false
      this.#take()
    })
    return true
  }

  /** Takes the settled read ahead: its error, the end of the file, or its chunks, the next read sent first. */
  #take(): void {
    const slot = this.#next!
    this.#next = undefined
    if (slot.error !== null) return void this.#stream.destroy(slot.error)
    if (slot.n === 0) return void this.#stream.push(null)
    this.#position += slot.n
    this.#current = slot
    if (!this.#stream.destroyed) this.#issue()
    this.#give()
  }

  /** Pushes the current read's next chunk. */
  #give(): void {
    const slot = this.#current!
    const from = slot.given
    const to = Math.min(slot.n, from + this.#chunk)
    slot.given = to
    if (to === slot.n) this.#current = undefined
    this.#stream.push(from === 0 && to === slot.buffer.length ? slot.buffer : slot.buffer.subarray(from, to))
  }
}
