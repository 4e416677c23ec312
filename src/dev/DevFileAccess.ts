/**
 * `DevFileAccess`: the only door an in-process engine is given to the disk. One is made fresh for
 * each capability invocation, pre-scoped to the files that invocation may touch, and closed when
 * the invocation returns.
 *
 * Every method takes workspace-relative paths (a leading `/` is refused) and checks, in order:
 * the path's text (`workspacePath`), the step's envelope (allowlist or create authorization, never
 * a path withheld as dirty), the policy (fail closed, mandatory deny set), and only then touches
 * the disk through `PinnedRoot`, where path safety is decided on the descriptor at use time: no
 * link followed anywhere, no `..` above the root, no window between a check and its use. There is
 * no lexical walk of existing components to go stale between check and use.
 *
 * | method | envelope | policy |
 * |---|---|---|
 * | `read` | allowlist | `canRead` and `canWrite` |
 * | `exists` | allowlist, or create-authorized | `canWrite` |
 * | `write` | allowlist, or create-authorized and absent | `canWrite` |
 * | `delete` | allowlist | `canWrite` |
 * | `mkdir` | a directory a `mayCreate` glob needs | `canWrite` on each directory created |
 * | `rename` | source in the allowlist; destination in it, or create-authorized and absent | `canWrite` on both |
 *
 * `read` asks both `canRead` and `canWrite`: an in-place engine's remit is "files I may rewrite",
 * so `canWrite` alone would let it read what the read policy hides and `canRead` alone would let it
 * look at files it has no mandate to change. "Create-authorized" means a `mayCreate` glob matches;
 * files created during the invocation may then be written again, renamed or deleted by it.
 *
 * Every refusal is thrown to the engine *and* recorded, so a step whose engine swallows the error
 * is still reported. This contains engines that use the façade; it is not a sandbox. An engine is
 * trusted code that could import `node:fs` directly, and a child process it spawns is not
 * contained by anything here.
 *
 * @since 0.1.0
 */
import { TextDecoder } from "node:util"
import type { PinnedRoot } from "../PinnedRoot.ts"
import { badArgumentPinnedFsError, permissionDenied, PinnedFsError } from "../internal/errors.ts"
import { type CreatedDirectory, ensureDirectories, withParents } from "./directories.ts"
import { globList, type GlobList } from "./globs.ts"
import { ancestors, workspacePath } from "./paths.ts"
import { fixedMandatorySet, type MandatorySet } from "./mandatory.ts"
import { decide, enforce, type Policy } from "./Policy.ts"
import { escaped } from "./quote.ts"

/**
 * @since 0.1.0
 * @category models
 */
export type Method = "read" | "write" | "delete" | "rename" | "mkdir" | "exists"

/**
 * What the façade saw an engine do and refuse, for the re-read and the step's report.
 *
 * @since 0.1.0
 * @category models
 */
export interface Journal {
  /** Paths written (including created). */
  readonly written: ReadonlyArray<string>
  /** Paths created by this invocation (by `write` or as a rename destination). */
  readonly created: ReadonlyArray<string>
  readonly deleted: ReadonlyArray<string>
  readonly renamed: ReadonlyArray<{ readonly from: string; readonly to: string }>
  readonly directories: ReadonlyArray<string>
  readonly refusals: ReadonlyArray<{ readonly method: Method; readonly path: string; readonly error: PinnedFsError }>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface DevFileAccessOptions {
  readonly root: PinnedRoot
  readonly policy: Policy | undefined
  /** The workspace's mandatory deny set (`mandatorySetOf`); default its fixed entries only. */
  readonly mandatory?: MandatorySet | undefined
  /** Paths (canonical) the invocation may read and rewrite. */
  readonly allowlist: ReadonlyArray<string>
  /** Globs of files the invocation may create. */
  readonly mayCreate?: ReadonlyArray<string> | GlobList | undefined
  /** Paths kept from the invocation because memory holds newer text: refused for every method. */
  readonly withheld?: ReadonlyArray<string> | undefined
  /** An inspection: every mutation is refused. */
  readonly readOnly?: boolean | undefined
  /** Largest file `read` returns. Default 4 MiB. */
  readonly maxFileBytes?: number | undefined
  /**
   * Told of a call refused because it came after the invocation's report was made (the plan
   * reports it as an `ERROR` in the workspace's diagnostics, the step being over).
   */
  readonly onLateCall?: ((method: Method, path: string, error: PinnedFsError) => void) | undefined
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

const notText = (path: string, why: string): PinnedFsError =>
  new PinnedFsError({
    code: "EILSEQ",
    errno: -84,
    syscall: "read",
    path,
    description: `'${escaped(path)}' is ${why}: not text`,
    reason: "InvalidData"
  })

/**
 * @since 0.1.0
 * @category models
 */
export class DevFileAccess {
  /** The allowlist: the files this invocation may read and rewrite. */
  readonly scope: ReadonlyArray<string>

  readonly #root: PinnedRoot
  readonly #policy: Policy | undefined
  readonly #mandatory: MandatorySet
  readonly #allowed: Set<string>
  readonly #created = new Set<string>()
  readonly #mayCreate: GlobList
  readonly #withheld: Set<string>
  readonly #readOnly: boolean
  readonly #maxFileBytes: number
  readonly #onLateCall: DevFileAccessOptions["onLateCall"]
  /** The invocation returned: no new call, and no further stage of a call still running. */
  #returned = false
  /** The invocation's report is made: what is refused now is told to `onLateCall`. */
  #closed = false
  readonly #inflight = new Set<Promise<unknown>>()
  /** Files `createEmpty` made, with the directories made for each (parent first). */
  readonly #placeholders = new Map<string, ReadonlyArray<CreatedDirectory>>()
  readonly #journal = {
    written: new Set<string>(),
    deleted: new Set<string>(),
    renamed: [] as Array<{ from: string; to: string }>,
    directories: new Set<string>(),
    refusals: [] as Array<{ method: Method; path: string; error: PinnedFsError }>
  }

  private constructor(options: DevFileAccessOptions) {
    this.#root = options.root
    this.#policy = options.policy
    this.#mandatory = options.mandatory ?? fixedMandatorySet
    this.scope = Object.freeze(options.allowlist.map((p) => workspacePath(p, "allowlist path")))
    this.#allowed = new Set(this.scope)
    const mayCreate = options.mayCreate ?? []
    this.#mayCreate = Array.isArray(mayCreate) ? globList(mayCreate, "mayCreate") : (mayCreate as GlobList)
    this.#withheld = new Set(options.withheld ?? [])
    this.#readOnly = options.readOnly === true
    this.#maxFileBytes = options.maxFileBytes ?? 4 * 1024 * 1024
    this.#onLateCall = options.onLateCall
  }

  /**
   * A façade over `root` for one invocation.
   *
   * @since 0.1.0
   */
  static make(options: DevFileAccessOptions): DevFileAccess {
    return new DevFileAccess(options)
  }

  /** Reads a file in the allowlist as UTF-8 text. Binary or over-size content is refused. */
  read(path: string): Promise<string> {
    return this.#guard("read", path, async (p) => {
      this.#member(p, "read")
      enforce(this.#policy, ["read", "write"], p, this.#mandatory)
      const [r] = await this.#root.batch([{ operation: "readFile", path: p }], { size: 1, response: this.#maxFileBytes })
      if (!r!.ok) throw r!.error
      const bytes = r!.value as Uint8Array
      if (bytes.includes(0)) throw notText(p, "binary (contains NUL bytes)")
      try {
        return utf8.decode(bytes)
      } catch {
        throw notText(p, "not valid UTF-8")
      }
    })
  }

  /**
   * Whether `path` names anything (a link counts: answering false would invite a write that the
   * link check then refuses). Absent: `false`. Throws for a path outside the envelope, a policy
   * refusal, and a link or escape on the way.
   */
  exists(path: string): Promise<boolean> {
    return this.#guard("exists", path, async (p) => {
      if (!this.#isMember(p) && !this.#mayCreate.matches(p)) {
        throw permissionDenied(`'${escaped(p)}' is neither in this step's allowlist nor a path it may create`, p, "allowlist")
      }
      enforce(this.#policy, ["write"], p, this.#mandatory)
      try {
        return await this.#root.exists(p)
      } catch (e) {
        if (e instanceof PinnedFsError && e.code === "ENOTDIR") return false
        throw e
      }
    })
  }

  /** Replaces a file in the allowlist atomically, or creates one a `mayCreate` glob allows. */
  write(path: string, content: string): Promise<void> {
    return this.#guard("write", path, async (p) => {
      if (typeof content !== "string") throw badArgumentPinnedFsError("write content must be a string", p, "write")
      this.#mutable("write", p)
      const creating = !this.#isMember(p)
      if (creating) this.#creatable(p)
      enforce(this.#policy, ["write"], p, this.#mandatory)
      // A file being created must not already exist: one that does is outside the allowlist, and
      // "wx" makes that the kernel's answer, not a check with a window before it.
      const options = creating ? ({ flag: "wx" } as const) : ({ atomic: true } as const)
      let first = true
      const { created } = await withParents(
        this.#root,
        p,
        (d) => this.#directoryRefusal(d),
        () => {
          // The retry after missing parents were made is a stage of its own.
          if (!first) this.#stillRunning("write", p)
          first = false
          return this.#root.writeFileString(p, content, options).catch((e: unknown) => {
            throw creating && e instanceof PinnedFsError && e.code === "EEXIST"
              ? permissionDenied(`'${escaped(p)}' exists and is not in this step's allowlist: not overwritten`, p, "allowlist")
              : e
          })
        }
      )
      for (const d of created) this.#journal.directories.add(d.path)
      if (creating) this.#created.add(p)
      this.#journal.written.add(p)
    })
  }

  /** Removes a file in the allowlist (never a directory, never what a link names). */
  delete(path: string): Promise<void> {
    return this.#guard("delete", path, async (p) => {
      this.#mutable("delete", p)
      this.#member(p, "delete")
      enforce(this.#policy, ["write"], p, this.#mandatory)
      await this.#root.remove(p)
      this.#journal.deleted.add(p)
    })
  }

  /** Creates a directory (and its missing parents) that a `mayCreate` glob needs. */
  mkdir(path: string): Promise<void> {
    return this.#guard("mkdir", path, async (p) => {
      this.#mutable("mkdir", p)
      const created = await ensureDirectories(this.#root, [...ancestors(p), p], (d) => this.#directoryRefusal(d))
      for (const d of created) this.#journal.directories.add(d.path)
    })
  }

  /** Renames a file in the allowlist to a path in it, or to an absent path it may create. */
  rename(from: string, to: string): Promise<void> {
    return this.#guard("rename", from, async (f) => {
      const t = workspacePath(to, "rename destination")
      this.#mutable("rename", f)
      this.#member(f, "rename")
      const creating = !this.#isMember(t)
      if (creating) this.#creatable(t)
      enforce(this.#policy, ["write"], f, this.#mandatory)
      enforce(this.#policy, ["write"], t, this.#mandatory)
      if (creating && (await this.#root.exists(t).catch(() => true))) {
        throw permissionDenied(`rename destination '${escaped(t)}' exists and is not in this step's allowlist`, t, "allowlist")
      }
      this.#stillRunning("rename", f)
      const { created } = await withParents(
        this.#root,
        t,
        (d) => this.#directoryRefusal(d),
        () => this.#root.rename(f, t)
      )
      for (const d of created) this.#journal.directories.add(d.path)
      if (creating) this.#created.add(t)
      this.#journal.renamed.push({ from: f, to: t })
    })
  }

  /**
   * @internal For a confined child process: creates `path` as an empty file (mode 0644), where a
   * `mayCreate` name allows it and nothing is there yet, so that the sandbox can bind that one file
   * writable rather than its whole directory. Missing parents are made as for `write`. Answers
   * whether it made the file (`false`: something is there, or it is in the allowlist already).
   */
  createEmpty(path: string): Promise<boolean> {
    return this.#guard("write", path, async (p) => {
      this.#mutable("write", p)
      if (this.#isMember(p)) return false
      this.#creatable(p)
      enforce(this.#policy, ["write"], p, this.#mandatory)
      let made: ReadonlyArray<CreatedDirectory>
      try {
        made = (
          await withParents(
            this.#root,
            p,
            (d) => this.#directoryRefusal(d),
            () => this.#root.writeFile(p, new Uint8Array(0), { flag: "wx", mode: 0o644 })
          )
        ).created
      } catch (e) {
        if (e instanceof PinnedFsError && e.code === "EEXIST") return false
        throw e
      }
      for (const d of made) this.#journal.directories.add(d.path)
      this.#created.add(p)
      this.#placeholders.set(p, made)
      return true
    })
  }

  /**
   * @internal Undoes {@link DevFileAccess.createEmpty} where the child left the file empty (or
   * removed it): the file goes, and so do the directories made for it that are still empty and
   * still the directories made. Answers whether the file was removed.
   *
   * "Empty" is checked by the removal itself (compare-and-swap, expecting no bytes): a child, or a
   * grandchild that outlived it, that writes the file while it is being removed keeps what it wrote.
   */
  removeIfEmpty(path: string): Promise<boolean> {
    return this.#guard("delete", path, async (p) => {
      const dirs = this.#placeholders.get(p)
      if (dirs === undefined) return false
      const removed = await this.#root.removeIfUnchanged(p, { expect: new Uint8Array(0) }).then(
        () => true,
        (e: unknown) => {
          if (!(e instanceof PinnedFsError)) throw e
          if (e.reason === "NotFound") return undefined
          // Written, or no longer a plain file (a directory, a link, a FIFO): the child's, kept.
          if (e.refusal === "changed" || e.refusal === "symlink" || e.refusal === "notregular" || e.code === "EISDIR") return false
          throw e
        }
      )
      if (removed === false) return false
      this.#placeholders.delete(p)
      this.#created.delete(p)
      this.#journal.written.delete(p)
      if (dirs.length > 0) {
        await this.#root.rmdirs([...dirs].reverse().map((d) => ({ path: d.path, identity: d.identity, optional: true })))
        for (const d of dirs) this.#journal.directories.delete(d.path)
      }
      return removed === true
    })
  }

  /** @internal What the invocation did and was refused. */
  journal(): Journal {
    const j = this.#journal
    return {
      written: [...j.written],
      created: [...this.#created],
      deleted: [...j.deleted],
      renamed: [...j.renamed],
      directories: [...j.directories],
      refusals: [...j.refusals]
    }
  }

  /**
   * @internal The invocation returned. Every call made from now on is refused, and so is the next
   * stage of a call still running (a write's directories, its retry, a rename after its check);
   * what is already on its way to the disk is waited for. Answers how many calls were still running.
   */
  async settle(): Promise<number> {
    this.#returned = true
    const running = this.#inflight.size
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight])
    return running
  }

  /** @internal Ends the invocation: an engine that kept the façade can do nothing more with it. */
  close(): void {
    this.#returned = true
    this.#closed = true
  }

  #stillRunning(method: Method, p: string): void {
    if (this.#returned) throw this.#afterReturn(method, p)
  }

  #afterReturn(method: Method, p: string): PinnedFsError {
    return permissionDenied(
      `'${method}' of '${escaped(p)}' came after the capability returned: refused, nothing done (await every call before returning)`,
      p,
      "closed"
    )
  }

  #guard<A>(method: Method, path: string, body: (p: string) => Promise<A>): Promise<A> {
    const call = this.#call(method, path, body)
    this.#inflight.add(call)
    const done = () => void this.#inflight.delete(call)
    call.then(done, done)
    return call
  }

  async #call<A>(method: Method, path: string, body: (p: string) => Promise<A>): Promise<A> {
    let p = typeof path === "string" ? path : String(path)
    try {
      if (this.#returned) throw this.#afterReturn(method, p)
      p = workspacePath(path)
      if (this.#withheld.has(p)) {
        throw permissionDenied(`'${escaped(p)}' is withheld from this step: it is edited in memory and not yet written`, p, "allowlist")
      }
      return await body(p)
    } catch (e) {
      const error = e instanceof PinnedFsError ? e : badArgumentPinnedFsError(e instanceof Error ? e.message : String(e), p, method)
      if (this.#closed) this.#onLateCall?.(method, p, error)
      else if (error.reason === "PermissionDenied" || error.refusal === "badargument") {
        this.#journal.refusals.push({ method, path: p, error })
      }
      throw error
    }
  }

  #isMember(p: string): boolean {
    return this.#allowed.has(p) || this.#created.has(p)
  }

  #member(p: string, method: Method): void {
    if (!this.#isMember(p)) throw permissionDenied(`'${method}' of '${escaped(p)}' refused: not in this step's allowlist`, p, "allowlist")
  }

  #creatable(p: string): void {
    if (!this.#mayCreate.matches(p)) {
      throw permissionDenied(`'${escaped(p)}' is not in this step's allowlist and no mayCreate glob allows creating it`, p, "allowlist")
    }
  }

  #mutable(method: Method, p: string): void {
    if (this.#readOnly) throw permissionDenied(`'${method}' refused: an inspection step only reads`, p, "inspection")
  }

  #directoryRefusal(dir: string): PinnedFsError | undefined {
    if (this.#returned) return this.#afterReturn("mkdir", dir)
    if (this.#readOnly) return permissionDenied("an inspection step creates no directory", dir, "inspection")
    if (this.#withheld.has(dir)) return permissionDenied(`'${escaped(dir)}' is withheld from this step`, dir, "allowlist")
    if (!this.#mayCreate.mayContain(dir)) {
      return permissionDenied(`directory '${escaped(dir)}' is not needed by any mayCreate glob: not created`, dir, "allowlist")
    }
    return decide(this.#policy, "write", dir, this.#mandatory)
  }
}
