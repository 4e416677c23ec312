/**
 * Rollback: the bytes a fix step's envelope held on disk before its fixers ran, kept so that a
 * step that fails (a fixer that crashed halfway, one killed by its timeout, one that rewrote a file
 * it must never write) can be put back as it was.
 *
 * **Keeping.** Before each capability runs, the files it may change (its allowlist, the tracked
 * paths the policy withholds from it, the unreadable ones) are read in one batch trip each, with
 * their permission bits. A path already kept by an earlier capability of the step is not read
 * again: the step's first view of it is its pre-step state, and a path an earlier capability of the
 * step created is recorded as absent. Contents stay in memory up to `memoryBytes`; past that they go
 * to a private directory (mode 0700, a random name) made beside the workspace, under the pinned
 * root's parent: on the workspace's own file system, so a large step does not fill a small
 * in-memory `/tmp`, and outside the workspace, so no fixer or listing sees it. It is removed when
 * the step ends, restored or not. A backup that cannot be kept (a full disk, an unwritable parent
 * and temporary directory) fails the capability before it runs.
 *
 * **Restoring** is compare-and-swap, path by path: a path is put back only while the disk still
 * holds what the workspace last read there (the re-read's text, its reason for being unreadable, or
 * its absence). A file someone changed since then is left as they left it and reported, never
 * overwritten. A file the fixer created is removed, one it removed is recreated (exclusively: a file
 * that appeared meanwhile stays), one it changed is replaced atomically with its old bytes and
 * permission bits. The removal and the replacement are one native compare-and-swap each
 * (`removeIfUnchanged`, `replaceIfUnchanged`), given the text just compared: a write that lands
 * after the comparison, even during the rename, is caught there and the path reported as changed.
 * The workspace is then brought back in line with the disk.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as nodePath from "node:path"
import { PinnedRoot } from "../PinnedRoot.ts"
import type { PinnedFsError } from "../internal/errors.ts"
import type { Expectation } from "../root/unchanged.ts"
import { withParents } from "./directories.ts"
import type { Limits } from "./limits.ts"
import { outcomeOfError, type ReadOutcome, readTexts } from "./readTexts.ts"
import type { Workspace } from "./Workspace.ts"

/**
 * @since 0.1.0
 * @category models
 */
export interface RestoreReport {
  /** Paths put back as they were before the step. */
  readonly restored: ReadonlyArray<string>
  /** Paths left as they are, and why (changed by someone else since the re-read, not restorable). */
  readonly kept: ReadonlyArray<{ readonly path: string; readonly why: string }>
}

type Kept =
  | { readonly state: "absent" }
  | { readonly state: "file"; readonly mode: number; readonly bytes: Uint8Array | undefined; readonly spill: string | undefined }
  | { readonly state: "unrestorable"; readonly reason: string }

/** What the workspace last knew the disk to hold at a path. */
type Expected =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "absent" }
  | { readonly kind: "unreadable"; readonly reason: string }

const expectedOf = (ws: Workspace, path: string): Expected => {
  const text = ws.get(path)
  if (text !== undefined) return { kind: "text", text }
  const reason = ws.unreadable.get(path)
  return reason !== undefined ? { kind: "unreadable", reason } : { kind: "absent" }
}

const sameAsExpected = (now: ReadOutcome, expected: Expected): boolean => {
  switch (expected.kind) {
    case "text":
      return now.kind === "text" && now.text === expected.text
    case "absent":
      return now.kind === "absent"
    case "unreadable":
      return now.kind === "unreadable" && now.reason === expected.reason
  }
}

/**
 * The pre-step bytes of one step.
 *
 * @since 0.1.0
 * @category rollback
 */
export class Backup {
  readonly #root: PinnedRoot
  readonly #limits: Limits
  readonly #memoryBytes: number
  readonly #kept = new Map<string, Kept>()
  #inMemory = 0
  #spillDir: string | undefined
  #spill: PinnedRoot | undefined
  #spilled = 0

  constructor(root: PinnedRoot, limits: Limits, memoryBytes: number) {
    this.#root = root
    this.#limits = limits
    this.#memoryBytes = memoryBytes
  }

  /** Whether the step recorded a pre-step state for `path`. */
  has(path: string): boolean {
    return this.#kept.has(path)
  }

  /** How many paths are kept, and how many of them went to the private directory. */
  get size(): { readonly paths: number; readonly spilled: number } {
    return { paths: this.#kept.size, spilled: this.#spilled }
  }

  /** Records that `path` did not exist before the step (an earlier capability created it). */
  absent(path: string): void {
    if (!this.#kept.has(path)) this.#kept.set(path, { state: "absent" })
  }

  /** Reads and keeps the current bytes and permission bits of every path not kept yet. */
  async keep(paths: Iterable<string>): Promise<void> {
    const fresh = [...new Set(paths)].filter((p) => !this.#kept.has(p))
    const per = Math.max(1, Math.floor(this.#limits.batchMembers / 2))
    for (let start = 0; start < fresh.length; start += per) {
      const chunk = fresh.slice(start, start + per)
      let pending = chunk
      while (pending.length > 0) pending = await this.#keepTrip(pending)
    }
  }

  /** One trip: `stat` and `readFile` of each path; answers those the shared budget could not carry. */
  async #keepTrip(paths: ReadonlyArray<string>): Promise<Array<string>> {
    const requests = paths.flatMap((path) => [
      { operation: "stat" as const, path },
      { operation: "readFile" as const, path }
    ])
    const answers = await this.#root.batch(requests, { size: requests.length, response: this.#limits.readBudgetBytes })
    const retry: Array<string> = []
    let left = this.#limits.readBudgetBytes
    for (const [i, path] of paths.entries()) {
      const stat = answers[2 * i]!
      const read = answers[2 * i + 1]!
      if (read.ok) {
        const bytes = read.value as Uint8Array
        left -= bytes.length
        const mode = stat.ok ? (stat.value as { mode: number }).mode & 0o7777 : 0o644
        await this.#store(path, bytes, mode)
      } else if (read.error.refusal === "toolarge" && left < this.#limits.readBudgetBytes && paths.length > 1) {
        retry.push(path)
      } else {
        const outcome = outcomeOfError(read.error, Number.MAX_SAFE_INTEGER)
        this.#kept.set(
          path,
          outcome.kind === "absent"
            ? { state: "absent" }
            : { state: "unrestorable", reason: outcome.kind === "unreadable" ? outcome.reason : "a directory" }
        )
      }
    }
    return retry
  }

  async #store(path: string, bytes: Uint8Array, mode: number): Promise<void> {
    if (this.#inMemory + bytes.length <= this.#memoryBytes) {
      this.#inMemory += bytes.length
      this.#kept.set(path, { state: "file", mode, bytes, spill: undefined })
      return
    }
    const spill = await this.#spillRoot()
    const name = String(this.#spilled++)
    await spill.writeFile(name, bytes, { flag: "wx", mode: 0o600 })
    this.#kept.set(path, { state: "file", mode, bytes: undefined, spill: name })
  }

  async #spillRoot(): Promise<PinnedRoot> {
    if (this.#spill) return this.#spill
    const made = await makePrivateDirectory(nodePath.dirname(this.#root.path))
    this.#spillDir = made
    this.#spill = await PinnedRoot.open(made)
    return this.#spill
  }

  /**
   * Puts `paths` back as they were before the step, each only while the disk holds what `ws` last
   * read there, then makes `ws` agree with the disk again. `canWrite` guards the parents a
   * recreated file needs.
   */
  async restore(ws: Workspace, paths: Iterable<string>, canWrite: (dir: string) => PinnedFsError | undefined): Promise<RestoreReport> {
    const restored: Array<string> = []
    const kept: Array<{ path: string; why: string }> = []
    const wanted = [...new Set(paths)].filter((p) => this.#kept.has(p)).sort()
    const now = await readOutcomes(this.#root, wanted, this.#limits)
    for (const path of wanted) {
      const before = this.#kept.get(path)!
      const current = now.get(path)!
      if (before.state === "unrestorable") {
        kept.push({ path, why: `its state before the step could not be kept (${before.reason})` })
        continue
      }
      if (!sameAsExpected(current, expectedOf(ws, path))) {
        kept.push({ path, why: changedWhy })
        continue
      }
      try {
        if (await this.#putBack(path, before, current, canWrite)) restored.push(path)
      } catch (e) {
        kept.push({ path, why: changedMeanwhile(e) ? changedWhy : `could not be restored: ${e instanceof Error ? e.message : String(e)}` })
      }
    }
    const after = await readOutcomes(this.#root, restored, this.#limits)
    for (const path of restored) {
      const o = after.get(path)!
      if (o.kind === "text") ws.admit(path, o.text)
      else if (o.kind === "absent") ws.drop(path)
    }
    return { restored, kept }
  }

  async #putBack(
    path: string,
    before: Exclude<Kept, { state: "unrestorable" }>,
    current: ReadOutcome,
    canWrite: (dir: string) => PinnedFsError | undefined
  ): Promise<boolean> {
    if (before.state === "absent") {
      if (current.kind === "absent") return false
      await this.#root.removeIfUnchanged(path, await this.#expectation(path, current))
      return true
    }
    const bytes = before.bytes ?? (await this.#spill!.readFile(before.spill!, { limit: PinnedRoot.maxReadLimit }))
    if (current.kind === "absent") {
      // Exclusively: a file someone created meanwhile is theirs.
      await withParents(this.#root, path, canWrite, () => this.#root.writeFile(path, bytes, { flag: "wx", mode: before.mode }))
      await this.#root.chmod(path, before.mode)
      return true
    }
    if (current.kind === "text" && Buffer.from(current.text, "utf8").equals(bytes)) return false
    try {
      await this.#root.replaceIfUnchanged(path, bytes, { ...(await this.#expectation(path, current)), mode: before.mode })
    } catch (e) {
      // A fixer that filled the disk leaves no room for the replacement's second copy, and the
      // kept bytes die with the process. Truncating the file frees what it holds now: when that
      // is at least what the kept bytes need, they are written in place (a crash in between could
      // leave a prefix, where the alternative is losing them for certain).
      if (!outOfSpace(e) || (await this.#root.stat(path)).size < bytes.length) throw e
      await this.#root.writeFile(path, bytes, { atomic: false })
    }
    return true
  }

  /**
   * What a compare-and-swap of `path` expects: the text just compared (the re-read decodes with
   * the byte-order mark kept and refuses what is not UTF-8, so encoding it gives the bytes read).
   * An unreadable file has no text here: its identity, with which the native side compares the
   * inode, its size and its modification time.
   */
  async #expectation(path: string, current: ReadOutcome): Promise<Expectation> {
    if (current.kind === "text") return { expect: Buffer.from(current.text, "utf8") }
    const st = await this.#root.stat(path, { bigint: true })
    return { identity: `${st.dev}:${st.ino}` }
  }

  /** Removes the private directory, if one was made. Idempotent. */
  async dispose(): Promise<void> {
    this.#spill?.close()
    this.#spill = undefined
    const dir = this.#spillDir
    this.#spillDir = undefined
    this.#kept.clear()
    if (dir !== undefined) await fs.promises.rm(dir, { recursive: true, force: true })
  }
}

const changedWhy = "changed on disk after the re-read read it: left as it is"

/** The compare-and-swap found the file changed since it was compared. */
const changedMeanwhile = (e: unknown): boolean => (e as { refusal?: unknown } | null)?.refusal === "changed"

const outOfSpace = (e: unknown): boolean => {
  const code = (e as { code?: unknown } | null)?.code
  return code === "ENOSPC" || code === "EDQUOT"
}

/** Every path's outcome as the re-read judges it (text, absent, unreadable with its reason). */
const readOutcomes = (root: PinnedRoot, paths: ReadonlyArray<string>, limits: Limits): Promise<Map<string, ReadOutcome>> =>
  readTexts(root, paths, limits)

/**
 * A directory only this process can use, beside `near` (under the workspace's parent), else in the
 * host's temporary directory.
 */
const makePrivateDirectory = async (near: string): Promise<string> => {
  try {
    return await fs.promises.mkdtemp(nodePath.join(near, ".pinnedfs-backup-"))
  } catch (first) {
    try {
      return await fs.promises.mkdtemp(nodePath.join(os.tmpdir(), "pinnedfs-backup-"))
    } catch {
      throw first instanceof Error ? first : new Error(String(first))
    }
  }
}
