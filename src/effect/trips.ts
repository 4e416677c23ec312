/**
 * The native trips of path-only reads, shared by the reads one turn submits. A kernel with 256
 * reads in flight submits them in bursts (each wave of answers resumes the fibers that send the
 * next); each read on its own trip pays a promise, a work item, a wake of a pool thread and a wake
 * of the loop, which cost more on this thread than the extension's own work. Reads submitted before
 * the microtask queue drains go in `readMany` trips per root handle and root check instead, one
 * promise and one wake for several reads (see `groupLimit`); a read alone in its turn takes its
 * own `call`, as before, so an awaited read waits for nothing.
 *
 * As safe as a trip each: every member runs the same core operation beneath the same pinned handle,
 * with the same limit, and answers alone (one missing file fails alone). The worker re-checks the
 * root path before the group's first member (and again after its last), after every member was
 * submitted: what each request's own check proved, that the root path still named the pinned
 * handle when its work began, the group's check proves too. A root found replaced fails every
 * member of the group as it would have failed each.
 *
 * @since 0.1.0
 */
import type { NativeRootHandle } from "../internal/native.ts"

/**
 * How many reads one trip carries at most: a burst larger than this takes several, run by several
 * pool threads at once. Larger trips cost less CPU per read but land more answers in one turn of
 * the loop, and a kernel does tens of microseconds of work for each: in the bench's 256-in-flight
 * flood on two loaded cores (Node 24's threadCpuUsage, p99 per turn), trips of 256 took the
 * extension's turns from 1.3-1.5 ms to 1.6-4.3 ms, trips of 8 the kernel's from about 4.1 ms to
 * about 5.6 (medians of four runs); trips of 4 left the kernel's at about 3.9.
 */
const groupLimit = 4

/** One submitted read, until its trip answers. */
interface Submitted {
  readonly handle: NativeRootHandle
  readonly verify: true | string
  readonly op: number
  readonly path: string
  readonly recursive: boolean
  readonly limit: number | undefined
  readonly answer: (value: unknown) => void
  readonly refuse: (error: unknown) => void
}

/**
 * The reads of one turn, sent when the microtask queue drains.
 *
 * @since 0.1.0
 * @category execution
 */
export class Trips {
  private pending: Array<Submitted> = []

  /**
   * @param readLimit Every read's limit: a group's members are bounded as each alone would be.
   * @param report Where a defect thrown by one member's continuation goes (by default, thrown again
   *   on its own, as an uncaught error), once the rest of its group is settled.
   */
  constructor(
    private readonly readLimit: number,
    private readonly report: (defect: unknown) => void = rethrow
  ) {}

  /** Submits one read: `answer` or `refuse` is called once, when its trip settles. */
  submit(
    handle: NativeRootHandle,
    verify: true | string,
    op: number,
    path: string,
    recursive: boolean,
    limit: number | undefined,
    answer: (value: unknown) => void,
    refuse: (error: unknown) => void
  ): void {
    if (this.pending.length === 0) queueMicrotask(() => this.flush())
    this.pending.push({ handle, verify, op, path, recursive, limit, answer, refuse })
  }

  private flush(): void {
    const all = this.pending
    this.pending = []
    if (all.length === 1) {
      alone(all[0]!)
      return
    }
    // Members of one group share a handle and a root check; a kernel sends one of each, so this
    // is nearly always a single group.
    const groups = new Map<NativeRootHandle, Map<true | string, Array<Submitted>>>()
    for (const s of all) {
      let byVerify = groups.get(s.handle)
      if (byVerify === undefined) groups.set(s.handle, (byVerify = new Map()))
      const group = byVerify.get(s.verify)
      if (group === undefined) byVerify.set(s.verify, [s])
      else group.push(s)
    }
    for (const byVerify of groups.values()) {
      for (const group of byVerify.values()) {
        for (let i = 0; i < group.length; i += groupLimit) this.send(group.slice(i, i + groupLimit))
      }
    }
  }

  /**
   * Settles one member; a throw (a defect in its continuation) is reported on its own, so one
   * member's defect never leaves the others of its group waiting.
   */
  private each(settle: (u: unknown) => void, u: unknown): void {
    try {
      settle(u)
    } catch (defect) {
      this.report(defect)
    }
  }

  private send(group: ReadonlyArray<Submitted>): void {
    if (group.length === 1) {
      alone(group[0]!)
      return
    }
    const first = group[0]!
    // One loop, not `Uint8Array.from(group, f)`: the mapped form walks the iterator protocol and
    // cost about 0.9 µs a group against 0.1 µs for this (Node 20), on every trip of a flood.
    const n = group.length
    const ops = new Uint8Array(n)
    const paths = new Array<string>(n)
    const recursive = new Uint8Array(n)
    for (let i = 0; i < n; i++) {
      const s = group[i]!
      ops[i] = s.op
      paths[i] = s.path
      recursive[i] = s.recursive ? 1 : 0
    }
    first.handle
      .readMany(
        ops,
        paths,
        recursive,
        n,
        // No budget across members: each is bounded by its own limit, as it is alone.
        Number.MAX_SAFE_INTEGER,
        first.verify,
        this.readLimit
      )
      .then(
        ([failed, values]) => {
          for (let i = 0; i < group.length; i++) {
            const s = group[i]!
            this.each(failed[i] === 1 ? s.refuse : s.answer, values[i])
          }
        },
        (error: unknown) => {
          for (const s of group) this.each(s.refuse, error)
        }
      )
  }
}

const rethrow = (defect: unknown): void =>
  queueMicrotask(() => {
    throw defect
  })

const alone = (s: Submitted): void => {
  s.handle.call(s.op, s.path, s.recursive, s.limit, s.verify).then(s.answer, s.refuse)
}
