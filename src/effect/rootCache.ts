/**
 * Pinned roots, reused across requests: pinning costs an `open` and a probe, and a kernel sends
 * thousands of requests against one workspace. Keyed by `(boundaryRoot, rootIdentity)` so a root
 * replaced at the same path is a different entry, bounded (least recently used goes first), and
 * leased: a handle evicted while a request still uses it is closed when that request releases it,
 * never under it.
 *
 * @since 0.1.0
 */
import type { Strategy } from "../PinnedRoot.ts"
import { native, type NativeRootHandle } from "../internal/native.ts"

/**
 * One cached root. `pinned` settles once; `leases` counts requests using it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Lease {
  readonly key: string
  readonly pinned: Promise<NativeRootHandle>
  /**
   * The handle once `pinned` has settled with it: the same handle, read without a promise hop.
   * An eviction closes it at once rather than a tick later.
   */
  readonly handle: NativeRootHandle | undefined
}

interface Entry extends Lease {
  readonly boundaryRoot: string
  readonly rootIdentity: string
  leases: number
  evicted: boolean
  handle: NativeRootHandle | undefined
}

// A NUL byte cannot occur in a path, so it separates the two parts of a key unambiguously.
const keyOf = (boundaryRoot: string, rootIdentity: string): string => `${rootIdentity}\0${boundaryRoot}`

const closeWhenPinned = (entry: Entry): void => {
  if (entry.handle !== undefined) entry.handle.close()
  else
    entry.pinned.then(
      (handle) => handle.close(),
      () => undefined
    )
}

/**
 * A bounded, leased cache of pinned roots.
 *
 * @since 0.1.0
 * @category models
 */
export class RootCache {
  private readonly entries = new Map<string, Entry>()
  /** The entry last moved to the end of `entries`, while it is still there. */
  private newest: Entry | undefined

  constructor(
    private readonly capacity: number,
    private readonly strategy: Strategy
  ) {}

  /** Leases the root pinned at `boundaryRoot` for `rootIdentity`, pinning it on a miss. */
  acquire(boundaryRoot: string, rootIdentity: string): Lease {
    // The root every request of a kernel names, found without building and hashing its key: the
    // most recently used entry is the same (boundaryRoot, rootIdentity) or it is looked up.
    const newest = this.newest
    if (newest !== undefined && newest.boundaryRoot === boundaryRoot && newest.rootIdentity === rootIdentity) {
      newest.leases += 1
      return newest
    }
    const key = keyOf(boundaryRoot, rootIdentity)
    let entry = this.entries.get(key)
    if (entry === undefined) {
      const pinned = native.pin(boundaryRoot, this.strategy)
      const made: Entry = { key, boundaryRoot, rootIdentity, pinned, leases: 0, evicted: false, handle: undefined }
      // Also observes a rejection, so an unawaited one is never reported as unhandled.
      pinned.then(
        (handle) => {
          made.handle = handle
        },
        () => undefined
      )
      entry = made
    } else {
      this.entries.delete(key)
    }
    this.entries.set(key, entry)
    this.newest = entry
    entry.leases += 1
    for (const [, oldest] of this.entries) {
      if (this.entries.size <= this.capacity) break
      this.evictEntry(oldest)
    }
    return entry
  }

  /** Ends a lease; an evicted root closes when its last lease ends. */
  release(lease: Lease): void {
    const entry = lease as Entry
    entry.leases -= 1
    if (entry.evicted && entry.leases === 0) closeWhenPinned(entry)
  }

  /** Drops a root that failed to pin, or whose identity is no longer the one asked for. */
  evict(lease: Lease): void {
    this.evictEntry(lease as Entry)
  }

  /** How many roots are cached (for tests). */
  get size(): number {
    return this.entries.size
  }

  /** Evicts every root; each closes once no request uses it. */
  close(): void {
    for (const entry of [...this.entries.values()]) this.evictEntry(entry)
  }

  private evictEntry(entry: Entry): void {
    if (entry.evicted) return
    entry.evicted = true
    if (this.newest === entry) this.newest = undefined
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key)
    if (entry.leases === 0) closeWhenPinned(entry)
  }
}
