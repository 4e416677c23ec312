/**
 * `PinnedRoot`: a directory pinned by handle, and every file operation beneath it resolved from that
 * handle with no symbolic link followed, no `..` above it, and no check separated from its use. The
 * promise API for any Node program, in the manner of Go's `os.Root`.
 *
 * Paths are relative to the root. A leading `/` is refused: it is almost always a host path leaking
 * in where a workspace path was meant, and resolving it "inside" the root would hide that bug.
 *
 * @since 0.1.0
 */
import { isAbsolute, resolve } from "node:path"
import type { Readable, Writable } from "node:stream"
import { TextDecoder } from "node:util"
import { badArgumentPinnedFsError, fromNative, PinnedFsError } from "./internal/errors.ts"
import { native, type NativeRequest, type NativeRootHandle } from "./internal/native.ts"
import { fileInfoOf, type StatRecord } from "./internal/statRecord.ts"
import { decodeText } from "./internal/text.ts"
import { abortable, signalOf } from "./root/abort.ts"
import { removeWide } from "./root/removeWide.ts"
import { checkOptions } from "./root/options.ts"
import { type BigIntStats, type Stats, statsOfRecord } from "./root/stats.ts"
import { closeHandlesOf, type HandleFlag, openHandle, type PinnedFileHandle } from "./root/handle.ts"
import { handleReadStream, type ReadStreamOptions, rootWriteStream, type WriteStreamOptions } from "./root/streams.ts"
import { type CpOptions, copyFile, cp } from "./root/copy.ts"
import { link, symlink } from "./root/links.ts"
import { lchown, truncate, utimes } from "./root/times.ts"
import { type Expectation, type ReplaceIfUnchangedOptions, removeIfUnchanged, replaceIfUnchanged } from "./root/unchanged.ts"

/**
 * How paths are resolved beneath the root. `"openat2"`: one kernel-confined lookup (Linux 5.6+;
 * `O_NOFOLLOW_ANY` on macOS 11+). `"walk"`: one no-follow `openat` per component, portable.
 * `"auto"`: the kernel way where it exists, else the walk; once the kernel way has worked in a
 * process it is never given up for the walk.
 *
 * @since 0.1.0
 * @category models
 */
export type Strategy = "auto" | "openat2" | "walk"

/** @since 0.1.0 @category models */
export type FileType = "File" | "Directory" | "SymbolicLink" | "BlockDevice" | "CharacterDevice" | "FIFO" | "Socket" | "Unknown"

/**
 * What `stat` answers, with lstat semantics: a trailing link is described, not followed. 64-bit
 * quantities are `bigint` so no identity is rounded.
 *
 * @since 0.1.0
 * @category models
 */
export interface FileInfo {
  readonly type: FileType
  readonly dev: bigint
  readonly ino: bigint
  readonly mode: number
  readonly nlink: bigint
  readonly uid: number
  readonly gid: number
  readonly rdev: bigint
  readonly size: bigint
  readonly blksize: bigint
  readonly blocks: bigint
  readonly atimeMs: number
  readonly mtimeMs: number
  readonly ctimeMs: number
  /** -1 where the platform did not report a birth time. */
  readonly birthtimeMs: number
  /**
   * The same times in whole nanoseconds since the epoch, exact (the `…Ms` doubles are not): what
   * `BigIntStats`' `…Ns` carry. The birth time's is `0n` where none was reported. Absent from a
   * record made elsewhere, where `BigIntStats` reads the whole milliseconds instead.
   */
  readonly atimeNs?: bigint | undefined
  readonly mtimeNs?: bigint | undefined
  readonly ctimeNs?: bigint | undefined
  readonly birthtimeNs?: bigint | undefined
}

/** @since 0.1.0 @category models */
export interface Resolution {
  /** Root-relative path the walk reached, on-disk spelling for existing components. */
  readonly path: string
  /** The first link's text, read without opening what it names; `null` when none was met. */
  readonly target: string | null
}

/**
 * Options of {@link PinnedRoot.open}.
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenOptions {
  readonly strategy?: Strategy | undefined
  /**
   * Most bytes one read may answer (`readFile`, `readFileString`, each `batch` member), from 1 to
   * {@link PinnedRoot.maxReadLimit}; default {@link PinnedRoot.defaultReadLimit}. A larger file, or
   * one that grows past it while being read, is refused (`toolarge`, `BadArgument`) before its
   * content is held in memory.
   */
  readonly readLimit?: number | undefined
  /**
   * What a symbolic link beneath the root gets: `"refuse"` (the default) refuses every link on
   * every path; `"within"` follows a link while its resolution stays beneath the root (an absolute
   * link text, a `..` above the root, a mount or more than 40 links on one path are refused), on
   * the way always and as the final component of reads and listings only. docs/pinnedroot.md,
   * "Links within the root".
   *
   * @since 0.2.0
   */
  readonly symlinks?: "refuse" | "within" | undefined
}

/**
 * Options of one read: `limit` overrides the root's `readLimit` for this call.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReadOptions {
  readonly limit?: number | undefined
  /** Stops the read: the call rejects with an `AbortError` (see docs/pinnedroot.md, "Abort"). */
  readonly signal?: AbortSignal | undefined
}

/** @since 0.1.0 @category models */
export type OpenFlag = "r" | "r+" | "w" | "wx" | "w+" | "wx+" | "a" | "ax" | "a+" | "ax+"

/**
 * Options of {@link PinnedRoot.writeFile}. What each write gives by default: a `w`-family flag
 * (`"w"`, `"w+"`, `"wx"`, `"wx+"`) replaces the file whole (crash-safe: a process killed at any
 * point, or a full disk, leaves the old content or the new); appends and `"r+"` change the file in
 * place, as Node does. Nothing is fsynced unless `durable` asks (see docs/write-semantics.md).
 *
 * @since 0.1.0
 * @category models
 */
export interface WriteOptions {
  readonly flag?: OpenFlag | undefined
  /** Permission bits for a file this call creates (the umask applies, as with `open(2)`). */
  readonly mode?: number | undefined
  /**
   * How a `w`-family write replaces the file. Left out: a temporary file beside the target, renamed
   * over it (`"wx"`: published only where nothing has the name), keeping the old file's mode and
   * owner; where the directory takes no new file from the caller, or the owner cannot be kept (an
   * unprivileged caller rewriting another user's file), the file is written in place instead, as an
   * editor does. `true`: always the replacement, failing rather than writing in place (and the
   * replacement is the caller's where the owner cannot be kept). `false`: in place, as
   * `fs.writeFile` (truncate, then write): a crash can leave a prefix. Only `true` is refused with
   * another flag.
   */
  readonly atomic?: boolean | undefined
  /**
   * Make the write survive a crash of the machine, not only of the process: the data is fsynced
   * before the rename publishes it, and the directory after (a directory that may be searched but
   * not read cannot be fsynced: Linux syncs its file system instead). In place: the file is
   * fsynced after the write.
   */
  readonly durable?: boolean | undefined
  /**
   * Stops the write before it is published: an aborted replacement leaves the old content and
   * rejects with an `AbortError`; one the worker finished first resolves.
   */
  readonly signal?: AbortSignal | undefined
}

/** A directory the `mkdirs` program should ensure. @since 0.1.0 @category models */
export interface PlannedDirectory {
  readonly path: string
  /** Exact mode to give a directory the program creates (no umask surprise). Default 0o777. */
  readonly mode?: number | undefined
}

/** @since 0.1.0 @category models */
export interface MkdirsResult {
  /** Every directory the program created, parent before child, with the identity that is the caller's cleanup ownership. */
  readonly created: ReadonlyArray<{ readonly path: string; readonly identity: string }>
  /** Why the program stopped early; created directories are listed all the same. */
  readonly error: PinnedFsError | null
}

/** @since 0.1.0 @category models */
export interface OwnedDirectory {
  readonly path: string
  readonly identity: string
  /** An optional member's refusal lets the program go on; a required one's stops it. */
  readonly optional?: boolean | undefined
}

/** @since 0.1.0 @category models */
export interface RmdirsResult {
  readonly members: ReadonlyArray<{
    readonly path: string
    readonly status: "removed" | "kept" | "missing" | "refused"
    readonly error: PinnedFsError | null
  }>
  readonly stopped: boolean
}

/** One member of {@link PinnedRoot.batch}. @since 0.1.0 @category models */
export type BatchRequest =
  | { readonly operation: "exists" | "stat" | "readFile" | "readLink" | "realPath" | "resolve"; readonly path: string }
  | { readonly operation: "readFileString"; readonly path: string; readonly encoding?: string | undefined }
  | { readonly operation: "readDirectory"; readonly path: string; readonly recursive?: boolean | undefined }

/** @since 0.1.0 @category models */
export type BatchResult = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: PinnedFsError }

const ops = native.ops

/** The flags whose write replaces the file's whole content. */
const wholeFileFlags: ReadonlySet<string> = new Set(["w", "w+", "wx", "wx+"])

const booleanOption = (value: unknown, name: string): boolean | undefined => {
  if (value === undefined || typeof value === "boolean") return value
  throw badArgumentPinnedFsError(`${name} must be a boolean`)
}

/** The options of {@link PinnedRoot.glob} and {@link PinnedRoot.globListing}. */
interface GlobOptions {
  readonly root?: string | undefined
  readonly exclude?: ReadonlyArray<string> | undefined
  readonly dot?: boolean | undefined
  readonly signal?: AbortSignal | undefined
}

/** @internal */
export const relativePath = (value: unknown, what = "path"): string => {
  if (typeof value !== "string") throw badArgumentPinnedFsError(`${what} must be a string, got ${typeOf(value)}`)
  if (value.startsWith("/")) {
    throw badArgumentPinnedFsError(`${what} must be relative to the root; '${value.slice(0, 200)}' is absolute`, value)
  }
  return value
}

const typeOf = (u: unknown): string => (u === null ? "null" : Array.isArray(u) ? "array" : typeof u)

/** @internal */
export const checkMode = (mode: unknown, what = "mode"): number | undefined => {
  if (mode === undefined) return undefined
  if (typeof mode !== "number" || !Number.isInteger(mode) || mode < 0 || mode > 0o7777) {
    throw badArgumentPinnedFsError(`${what} must be an integer permission mode between 0 and 0o7777`)
  }
  return mode
}

/** Checks an owner and group as chown(2) takes them: `-1` keeps one, anything else fits uid_t/gid_t. @internal */
export const checkIds = (uid: unknown, gid: unknown): void => {
  for (const [name, id] of [
    ["uid", uid],
    ["gid", gid]
  ] as const) {
    if (typeof id !== "number" || !Number.isInteger(id) || id < -1 || id > 0xfffffffe) {
      throw badArgumentPinnedFsError(`${name} must be an integer between -1 and 4294967294`)
    }
  }
}

const readLimitOf = (u: unknown, what: string): number => {
  if (typeof u !== "number" || !Number.isInteger(u) || u < 1 || u > maxReadLimit) {
    throw badArgumentPinnedFsError(`${what} must be an integer from 1 to ${maxReadLimit}, got ${String(u)}`)
  }
  return u
}

/**
 * 512 MiB: far above any source, data or document file a tool reads whole, small enough that a
 * planted huge (or sparse) file costs no more than that in memory, and the size past which text
 * cannot become one JavaScript string anyway (V8 holds at most 2^29 - 24 UTF-16 units).
 */
const defaultReadLimit = 512 * 1024 * 1024
/** Node's own `fs.readFile` ceiling, which the native core also enforces whatever it is asked. */
const maxReadLimit = 2 ** 31 - 1

const decoder = (encoding: unknown): TextDecoder => {
  if (encoding !== undefined && typeof encoding !== "string") throw badArgumentPinnedFsError("encoding must be a string")
  try {
    return new TextDecoder(encoding ?? "utf-8")
  } catch {
    throw badArgumentPinnedFsError(`unknown encoding '${String(encoding)}'`)
  }
}

/** Only {@link PinnedRoot.open} holds this, so only it can construct a root. */
const opening: unique symbol = Symbol("PinnedRoot.open")

/**
 * An entry {@link PinnedRoot.glob} skips because its name is not valid UTF-8.
 *
 * @since 0.1.0
 */
export interface UnnamedEntry {
  /** Its path relative to the glob's `root`, as bytes. */
  readonly bytes: Uint8Array
  /** A directory (not entered: what is beneath it is not listed). */
  readonly directory: boolean
}

/**
 * What {@link PinnedRoot.globListing} answers.
 *
 * @since 0.1.0
 */
export interface GlobListing {
  readonly paths: Array<string>
  readonly unnamed: Array<UnnamedEntry>
}

/**
 * A pinned root directory. Create one with {@link PinnedRoot.open}; close it when done (operations
 * already in flight finish first: the handle is reference-counted).
 *
 * @since 0.1.0
 * @category constructors
 */
export class PinnedRoot {
  /** The path the root was opened with, made absolute against the working directory of that call. */
  readonly path: string
  /**
   * The pinned directory's identity: `"dev:ino"` (decimal, from 64-bit values), then what tells it
   * from a directory that gets the same inode number after it is deleted: `":b<sec>.<nsec>"`, its
   * birth time, where the file system records one (ext4, xfs, btrfs, tmpfs; APFS), else
   * `":g<generation>"` (FS_IOC_GETVERSION), else nothing. The extension's `identifyRoot` answers the
   * same text for the same directory.
   */
  readonly identity: string
  /** The strategy in force (`"auto"` resolved to what this kernel offers). */
  readonly strategy: "openat2" | "walk" | "nofollow_any"
  /** Most bytes one read may answer (see {@link OpenOptions.readLimit}). */
  readonly readLimit: number
  /** @internal */
  readonly handle: NativeRootHandle

  /** The `readLimit` a root gets when none is given: 512 MiB. */
  static readonly defaultReadLimit: number = defaultReadLimit
  /** The largest `readLimit` there is: 2 GiB - 1, Node's own `fs.readFile` ceiling. */
  static readonly maxReadLimit: number = maxReadLimit

  private constructor(token: typeof opening, handle: NativeRootHandle, readLimit: number, path: string) {
    // TypeScript keeps `new` out of reach; plain JavaScript does not, and would otherwise fail
    // later on a missing handle with a message about `undefined`.
    if (token !== opening) {
      throw new TypeError("PinnedRoot cannot be created with `new`: use `await PinnedRoot.open(directory)`")
    }
    this.handle = handle
    this.path = path
    this.identity = handle.identity
    this.strategy = handle.strategy
    this.readLimit = readLimit
  }

  /**
   * Pins `dir`. The path itself is trusted (links in it are followed once, here); everything after
   * is resolved from the handle, and a relative `dir` is recorded absolute in {@link PinnedRoot.path}.
   *
   * @example
   * ```ts
   * const root = await PinnedRoot.open("/home/me/project")
   * try {
   *   const text = await root.readFileString("src/index.ts")
   *   await root.writeFileString("out/index.ts", text)
   * } finally {
   *   root.close()
   * }
   * ```
   */
  static async open(dir: string, options?: OpenOptions): Promise<PinnedRoot> {
    if (typeof dir !== "string" || dir === "") throw badArgumentPinnedFsError("root directory must be a non-empty string")
    checkOptions(options, ["strategy", "readLimit", "symlinks"], "PinnedRoot.open")
    const strategy = options?.strategy ?? "auto"
    if (strategy !== "auto" && strategy !== "openat2" && strategy !== "walk") {
      throw badArgumentPinnedFsError(`strategy must be 'auto', 'openat2' or 'walk', got '${String(strategy)}'`)
    }
    const readLimit = options?.readLimit === undefined ? defaultReadLimit : readLimitOf(options.readLimit, "readLimit")
    const symlinks = options?.symlinks ?? "refuse"
    if (symlinks !== "refuse" && symlinks !== "within") {
      throw badArgumentPinnedFsError(`symlinks must be 'refuse' or 'within', got '${String(symlinks)}'`)
    }
    try {
      // Recorded absolute, from the working directory at the call: a relative label would change
      // meaning whenever the process changes directory, while the pinned handle never does.
      const shown = isAbsolute(dir) ? dir : resolve(dir)
      return new PinnedRoot(opening, await native.pin(dir, strategy, symlinks), readLimit, shown)
    } catch (u) {
      throw fromNative(u, dir)
    }
  }

  /** @internal */
  async run<A>(request: NativeRequest, shown: string | undefined): Promise<A> {
    try {
      return (await this.handle.execute(request)) as A
    } catch (u) {
      throw fromNative(u, shown, this.path)
    }
  }

  /** @internal The hot path for the path-only reads: operands as arguments, no request object. */
  async call<A>(op: number, path: string, recursive?: boolean, limit?: number): Promise<A> {
    const rel = relativePath(path)
    try {
      return (await this.handle.call(op, rel, recursive, limit)) as A
    } catch (u) {
      throw fromNative(u, path, this.path)
    }
  }

  /** Whether `path` names anything; a trailing link counts, a link on the way is refused. */
  async exists(path: string): Promise<boolean> {
    return this.call(ops.exists, path)
  }

  /**
   * lstat semantics, answered as `fs.Stats`, with `type` besides; a hard-linked regular file is
   * refused.
   */
  async stat(path: string, options?: { readonly bigint?: false | undefined }): Promise<Stats>
  /** lstat semantics, answered as `fs.BigIntStats` (every integer a bigint), with `type` besides. */
  async stat(path: string, options: { readonly bigint: true }): Promise<BigIntStats>
  /** lstat semantics: `fs.Stats`, or `fs.BigIntStats` with `{ bigint: true }`. */
  async stat(path: string, options?: { readonly bigint?: boolean | undefined }): Promise<Stats | BigIntStats>
  /** lstat semantics: `fs.Stats`, or `fs.BigIntStats` with `{ bigint: true }` (the implementation). */
  async stat(path: string, options?: { readonly bigint?: boolean | undefined }): Promise<Stats | BigIntStats> {
    const bigint = booleanOption(checkOptions(options, ["bigint"], "stat")?.bigint, "bigint") === true
    return statsOfRecord(await this.call<StatRecord>(ops.stat, path), bigint)
  }

  /**
   * The whole content of the regular file at `path`: at most `readLimit` bytes (the root's, or
   * `options.limit`); a larger file is `toolarge`. A FIFO, socket or device is refused
   * (`BadResource`) without being opened for reading; a link anywhere on the path is refused.
   *
   * @example
   * ```ts
   * const bytes = await root.readFile("assets/logo.png", { limit: 1024 * 1024 })
   * ```
   */
  async readFile(path: string, options?: ReadOptions): Promise<Buffer> {
    const limit = this.limitOf(checkOptions(options, ["limit", "signal"], "readFile"))
    const signal = signalOf(options?.signal)
    if (signal === undefined) return this.call(ops.readFile, path, false, limit)
    return this.cancellable({ op: ops.readFile, path: relativePath(path), maxBytes: limit }, path, signal, false)
  }

  /**
   * Decodes with `TextDecoder`, as Effect's `readFileString` does (invalid bytes become U+FFFD).
   * The second argument is the encoding, or `{ encoding, limit }`. Text too long for one JavaScript
   * string (about 512 MiB) is `toolarge`, like a file over the read limit.
   */
  async readFileString(path: string, encoding?: string | (ReadOptions & { readonly encoding?: string | undefined })): Promise<string> {
    const options = typeof encoding === "object" && encoding !== null ? encoding : { encoding }
    checkOptions(options, ["encoding", "limit", "signal"], "readFileString")
    const d = decoder(options.encoding)
    return decodeText(d, await this.readFile(path, { limit: options.limit, signal: options.signal }), path)
  }

  private limitOf(options: ReadOptions | undefined): number {
    if (options !== undefined && (typeof options !== "object" || options === null)) {
      throw badArgumentPinnedFsError("read options must be an object")
    }
    return options?.limit === undefined ? this.readLimit : readLimitOf(options.limit, "read limit")
  }

  /**
   * The names in the directory at `path` (`""` is the root). With `recursive`, every entry below as
   * a `/`-separated path; a link is listed, never descended, and recursion stops at depth 256.
   */
  async readDirectory(
    path: string,
    options?: { readonly recursive?: boolean | undefined; readonly signal?: AbortSignal | undefined }
  ): Promise<Array<string>> {
    const recursive = booleanOption(checkOptions(options, ["recursive", "signal"], "readDirectory")?.recursive, "recursive") === true
    const signal = signalOf(options?.signal)
    if (signal === undefined) return this.call(ops.readDirectory, path, recursive)
    return this.cancellable({ op: ops.readDirectory, path: relativePath(path), recursive }, path, signal, false)
  }

  /** The text of the link at `path`, as stored; `EINVAL` for anything that is not a link. */
  async readLink(path: string): Promise<string> {
    return this.call(ops.readLink, path)
  }

  /** The root-relative canonical path (on-disk spelling); a link anywhere is refused. */
  async realPath(path: string): Promise<string> {
    return this.call(ops.realPath, path)
  }

  /** Walks from the root without following anything; stops at the first link. */
  async resolve(path: string): Promise<Resolution> {
    return this.call(ops.resolve, path)
  }

  /**
   * Finds paths under `root` (relative to this root; default the root itself) matching `pattern`,
   * with Effect 4.1 `FileSystem.glob` semantics: brace expansion, `*`, `?`, `[...]` classes with
   * POSIX names, `**`, dot names skipped by wildcards unless `dot`, `dir/**` including `dir`, a
   * trailing `/` for directories only, `exclude` patterns whose directories are never read, results
   * `/`-separated and relative to `root`, depth first, each directory's entries sorted by name.
   * A missing `root` gives `[]`. The whole walk is one native call.
   *
   * **Differences from Effect**, all because no link is ever followed:
   * - a link matches like any other entry but is never a directory: no segment enters it, not
   *   `**` (as in Effect) and not a literal or wildcard segment (Effect follows those), and a
   *   directory-only pattern (`link/`) does not match it;
   * - `root` itself must not be or pass through a link (`PermissionDenied`);
   * - `..` in the pattern returns to the directory the walk came from; a pattern whose `..` could
   *   climb above the pinned root is refused (`PermissionDenied`, an escape) before anything is read;
   * - names that are not valid UTF-8 are skipped (no string names them faithfully):
   *   {@link PinnedRoot.globListing} answers them too; a literal segment with an escaped `/`
   *   matches nothing;
   * - absolute patterns are refused (`BadArgument`), like every absolute path here.
   */
  async glob(pattern: string, options?: GlobOptions): Promise<Array<string>> {
    return this.globRun(pattern, options, false)
  }

  /**
   * {@link PinnedRoot.glob}, and also what it skips: the entries whose names are not valid UTF-8
   * that the pattern would have reported or entered (matched with each invalid byte read as
   * U+FFFD, the excludes applied). A directory among them is not entered, so nothing beneath it is
   * listed. Each is answered as the bytes of its path relative to `root`, for a caller that must
   * report such a name rather than drop it; no operation here can be given it.
   */
  async globListing(pattern: string, options?: GlobOptions): Promise<GlobListing> {
    const paths: Array<string> = []
    const unnamed: Array<UnnamedEntry> = []
    // The addon marks them with a leading NUL, which no name holds: 'd' or 'e', then hex.
    for (const p of await this.globRun(pattern, options, true)) {
      if (p.charCodeAt(0) !== 0) paths.push(p)
      else unnamed.push({ bytes: new Uint8Array(Buffer.from(p.slice(2), "hex")), directory: p[1] === "d" })
    }
    return { paths, unnamed }
  }

  private async globRun(
    pattern: string,
    options:
      | {
          readonly root?: string | undefined
          readonly exclude?: ReadonlyArray<string> | undefined
          readonly dot?: boolean | undefined
          readonly signal?: AbortSignal | undefined
        }
      | undefined,
    unnamed: boolean
  ): Promise<Array<string>> {
    if (typeof pattern !== "string") throw badArgumentPinnedFsError("glob pattern must be a string")
    checkOptions(options, ["root", "exclude", "dot", "signal"], "glob")
    const signal = signalOf(options?.signal)
    const exclude = options?.exclude ?? []
    if (!Array.isArray(exclude) || exclude.some((e) => typeof e !== "string")) {
      throw badArgumentPinnedFsError("glob exclude must be an array of strings")
    }
    const request: NativeRequest = {
      op: ops.glob,
      path: "",
      to: relativePath(options?.root ?? "", "glob root"),
      pattern,
      exclude,
      dot: booleanOption(options?.dot, "dot") === true,
      ...(unnamed ? { unnamed: true } : {})
    }
    // The addon names what it refused: the pattern, or the root the pattern is read from.
    return signal === undefined ? this.run(request, undefined) : this.cancellable(request, undefined, signal, false)
  }

  /**
   * Creates the directory at `path`, with `mode` (before the umask) when given. With `recursive`,
   * missing parents too, each through its pinned parent, and an existing directory is not an error;
   * it answers the first directory it created (root-relative), or `undefined` when there was none to
   * create, as Node's `mkdir` answers (absolute there).
   */
  async makeDirectory(
    path: string,
    options?: { readonly recursive?: boolean | undefined; readonly mode?: number | undefined }
  ): Promise<string | undefined> {
    checkOptions(options, ["recursive", "mode"], "makeDirectory")
    const mode = checkMode(options?.mode)
    return this.run(
      {
        op: ops.makeDirectory,
        path: relativePath(path),
        recursive: booleanOption(options?.recursive, "recursive") === true,
        ...(mode === undefined ? {} : { mode })
      },
      path
    )
  }

  /**
   * Removes what `path` names, as Node's `fs.rm`: a directory needs `recursive`; `force` only
   * silences a missing name. A link is removed itself, never what it points at.
   *
   * @example
   * ```ts
   * await root.remove("dist", { recursive: true, force: true })
   * ```
   */
  async remove(
    path: string,
    options?: { readonly recursive?: boolean | undefined; readonly force?: boolean | undefined; readonly signal?: AbortSignal | undefined }
  ): Promise<void> {
    checkOptions(options, ["recursive", "force", "signal"], "remove")
    const signal = signalOf(options?.signal)
    const rel = relativePath(path)
    const recursive = booleanOption(options?.recursive, "recursive") === true
    const force = booleanOption(options?.force, "force") === true
    const request: NativeRequest = { op: ops.remove, path: rel, recursive, force }
    // An abort stops a recursive remove between two unlinks: it settles with what was done.
    if (signal !== undefined) return this.cancellable(request, path, signal, true)
    // Without one, a tree's subtrees are removed side by side, each by its own native remove.
    return recursive ? removeWide(this, rel, path, force) : this.run(request, path)
  }

  /**
   * Moves `from` to `to`, both relative to this root; what `to` named before is replaced, as
   * rename(2). With `noReplace`, an existing `to` is refused (`EEXIST`, `AlreadyExists`) by the
   * rename itself (`RENAME_NOREPLACE`; `RENAME_EXCL` on macOS), so no name created an instant
   * before is ever replaced; a Linux file system that cannot rename that way answers `EINVAL`.
   */
  async rename(from: string, to: string, options?: { readonly noReplace?: boolean | undefined }): Promise<void> {
    const noReplace = booleanOption(checkOptions(options, ["noReplace"], "rename")?.noReplace, "noReplace") === true
    return this.run(
      { op: ops.rename, path: relativePath(from, "from"), to: relativePath(to, "to"), ...(noReplace ? { noReplace } : {}) },
      from
    )
  }

  /** Sets the permission bits (`0` to `0o7777`) of what `path` names; a link is refused, never followed. */
  async chmod(path: string, mode: number): Promise<void> {
    const m = checkMode(mode)
    if (m === undefined) throw badArgumentPinnedFsError("chmod needs a mode")
    return this.run({ op: ops.chmod, path: relativePath(path), mode: m }, path)
  }

  /** Sets the owner and group of what `path` names (`-1` keeps one as it is); a link is refused. */
  async chown(path: string, uid: number, gid: number): Promise<void> {
    checkIds(uid, gid)
    return this.run({ op: ops.chown, path: relativePath(path), uid, gid }, path)
  }

  /**
   * Writes `data` to the file at `path`. `flag` is Node's (`"w"` default, `"wx"`, `"a"`, `"r+"`, …),
   * `mode` applies to a file it creates. A `w`-family flag replaces the file whole through a
   * temporary file renamed over it, so a reader, or a process killed mid-write, sees the old content
   * or the new; see {@link WriteOptions} for `atomic` and `durable`. Appends and `"r+"` open the
   * file, check it is a regular file with one link, then write where it is (never `O_TRUNC`).
   *
   * @example
   * ```ts
   * await root.writeFile("data.bin", new Uint8Array([1, 2, 3]), { durable: true, mode: 0o600 })
   * ```
   */
  async writeFile(path: string, data: Uint8Array, options?: WriteOptions): Promise<void> {
    if (!(data instanceof Uint8Array)) throw badArgumentPinnedFsError("data must be a Uint8Array")
    return this.write(path, data, options)
  }

  /** {@link PinnedRoot.writeFile} for text, encoded as UTF-8. */
  async writeFileString(path: string, data: string, options?: WriteOptions): Promise<void> {
    if (typeof data !== "string") throw badArgumentPinnedFsError("data must be a string")
    return this.write(path, data, options)
  }

  private async write(path: string, data: Uint8Array | string, options?: WriteOptions): Promise<void> {
    checkOptions(options, ["flag", "mode", "atomic", "durable", "signal"], "writeFile")
    const signal = signalOf(options?.signal)
    const flagName = options?.flag ?? "w"
    const flag = native.flags[flagName as OpenFlag]
    if (typeof flag !== "number" || !Object.hasOwn(native.flags, flagName)) {
      throw badArgumentPinnedFsError(`unknown open flag '${String(flagName)}'`)
    }
    const mode = checkMode(options?.mode)
    const atomic = booleanOption(options?.atomic, "atomic")
    const durable = booleanOption(options?.durable, "durable") === true
    if (atomic === true && !wholeFileFlags.has(flagName)) {
      throw badArgumentPinnedFsError(`atomic writes replace the whole file: use a 'w' flag (w, w+, wx, wx+), not '${flagName}'`)
    }
    const request: NativeRequest = {
      op: ops.writeFile,
      path: relativePath(path),
      data,
      flag,
      atomic: atomic === true,
      inPlace: atomic === false,
      durable,
      ...(mode === undefined ? {} : { mode })
    }
    // An abort stops a replacement before its rename: the old content stays.
    return signal === undefined ? this.run(request, path) : this.cancellable(request, path, signal, true)
  }

  /** Runs a planned directory creation in one trip; see {@link MkdirsResult}. */
  async mkdirs(plan: ReadonlyArray<PlannedDirectory>): Promise<MkdirsResult> {
    if (!Array.isArray(plan)) throw badArgumentPinnedFsError("mkdirs plan must be an array")
    const request = plan.map((d) => {
      if (typeof d !== "object" || d === null) throw badArgumentPinnedFsError("mkdirs plan member must be an object")
      const mode = checkMode(d.mode)
      return { path: relativePath(d.path), ...(mode === undefined ? {} : { mode }) }
    })
    const out = await this.run<{ created: MkdirsResult["created"]; error: unknown }>({ op: ops.mkdirs, plan: request }, "mkdirs")
    return { created: out.created, error: out.error === null ? null : fromNative(out.error, undefined, this.path) }
  }

  /** Removes owned directories, child before parent, each only while it keeps its identity. */
  async rmdirs(owned: ReadonlyArray<OwnedDirectory>): Promise<RmdirsResult> {
    if (!Array.isArray(owned)) throw badArgumentPinnedFsError("rmdirs members must be an array")
    const request = owned.map((d) => {
      if (typeof d !== "object" || d === null) throw badArgumentPinnedFsError("rmdirs member must be an object")
      if (typeof d.identity !== "string") throw badArgumentPinnedFsError('rmdirs member identity must be a "dev:ino" string')
      return { path: relativePath(d.path), identity: d.identity, optional: d.optional === true }
    })
    const out = await this.run<{
      members: Array<{ path: string; status: RmdirsResult["members"][number]["status"]; error: unknown }>
      stopped: boolean
    }>({ op: ops.rmdirs, owned: request }, "rmdirs")
    return {
      stopped: out.stopped,
      members: out.members.map((m) => ({ ...m, error: m.error === null ? null : fromNative(m.error, m.path, this.path) }))
    }
  }

  /**
   * Runs many reads in one trip off the JavaScript thread. Members fail alone. Each member's file
   * is bounded by the root's `readLimit`, and all contents together by `response`.
   */
  async batch(
    requests: ReadonlyArray<BatchRequest>,
    limits: { readonly size?: number; readonly response?: number } = {}
  ): Promise<Array<BatchResult>> {
    if (!Array.isArray(requests)) throw badArgumentPinnedFsError("batch requests must be an array")
    checkOptions(limits, ["size", "response"], "batch")
    const size = limits.size ?? 256
    const response = limits.response ?? 64 * 1024 * 1024
    if (requests.length > size) throw badArgumentPinnedFsError(`batch of ${requests.length} members exceeds the limit of ${size}`)
    // Compact wire form: one op byte, one path and one recursive byte per member (see
    // NativeRootHandle.readMany); a member refused here travels as op `native.refusedMember` and is not run.
    const n = requests.length
    const opCodes = new Uint8Array(n)
    const recursive = new Uint8Array(n)
    const paths: Array<string> = new Array(n)
    let decoders: Array<TextDecoder | undefined> | undefined
    let early: Array<PinnedFsError | undefined> | undefined
    for (let i = 0; i < n; i++) {
      const r = requests[i]!
      try {
        const op = batchOp(r)
        paths[i] = relativePath((r as { path?: unknown }).path)
        opCodes[i] = op
        if (r.operation === "readFileString") (decoders ??= [])[i] = decoder(r.encoding)
        else if (r.operation === "readDirectory" && r.recursive === true) recursive[i] = 1
      } catch (e) {
        ;(early ??= [])[i] = e instanceof PinnedFsError ? e : badArgumentPinnedFsError(String(e))
        opCodes[i] = native.refusedMember
        paths[i] = ""
      }
    }
    let raw: [Uint8Array, Array<unknown>]
    try {
      raw = await this.handle.readMany(opCodes, paths, recursive, size, response, false, this.readLimit)
    } catch (u) {
      throw fromNative(u, "batch", this.path)
    }
    const [failed, values] = raw
    const out: Array<BatchResult> = new Array(n)
    for (let i = 0; i < n; i++) {
      const refused = early?.[i]
      if (refused) out[i] = { ok: false, error: refused }
      else if (failed[i] === 1) out[i] = { ok: false, error: fromNative(values[i], paths[i], this.path) }
      else {
        const d = decoders?.[i]
        try {
          const v = values[i]
          out[i] = {
            ok: true,
            value: d ? decodeText(d, v as Uint8Array, paths[i]!) : opCodes[i] === ops.stat ? fileInfoOf(v as StatRecord) : v
          }
        } catch (e) {
          if (!(e instanceof PinnedFsError)) throw e
          out[i] = { ok: false, error: e }
        }
      }
    }
    return out
  }

  /** Drops this handle's reference; the descriptor closes once operations in flight finish. */
  close(): void {
    this.handle.close()
    void closeHandlesOf(this)
  }

  // handles: open, streams (src/root/handle.ts, src/root/streams.ts)

  /**
   * A file handle on the regular file at `path`, opened beneath the root as every operation
   * resolves (no link anywhere, no hard-linked file, no FIFO or device). `flags`: `r` (default),
   * `r+`, `w` (emptied only after the checks), `wx`, `a`, `ax`. Closing the root closes its handles.
   */
  async open(path: string, flags: HandleFlag = "r", mode?: number): Promise<PinnedFileHandle> {
    return openHandle(this, path, flags, mode, relativePath(path))
  }

  /** A `Readable` of the file at `path`, bytes `start` to `end` inclusive, through a handle it closes. */
  createReadStream(path: string, options?: ReadStreamOptions): Readable {
    const rel = relativePath(path)
    return handleReadStream(() => this.open(rel, "r"), options, true)
  }

  /** A `Writable` into the file at `path`; with `atomic`, published by rename when it finishes. */
  createWriteStream(path: string, options?: WriteStreamOptions): Writable {
    return rootWriteStream(this, relativePath(path), options)
  }

  // --- surface: openRoot, abort, dispose (logic in src/root/) ---

  /** @internal A request the caller's `signal` can stop (src/root/abort.ts). */
  cancellable<A>(request: NativeRequest, shown: string | undefined, signal: AbortSignal, effect: boolean): Promise<A> {
    return abortable<A>(signal, () => this.handle.cancellable(request), effect, shown, this.path)
  }

  /**
   * A root pinned at the directory `path` names beneath this one, opened from this root's handle
   * by the same resolution as every operation (a link, a mount point, `..` above this root, a
   * directory moved out on the way: refused). Its operations resolve from its own handle, and `..`
   * above it is refused, so none reaches this root. It keeps this root's strategy and read limit;
   * closing either leaves the other open.
   */
  async openRoot(path: string): Promise<PinnedRoot> {
    const rel = relativePath(path)
    try {
      const handle = await this.handle.openRoot(rel)
      // The addon joins this root's path with the lexed relative path; shown from this root's label.
      return new PinnedRoot(opening, handle, this.readLimit, this.path + handle.path.slice(this.handle.path.length))
    } catch (u) {
      throw fromNative(u, path, this.path)
    }
  }

  /** `using root = await PinnedRoot.open(dir)`: {@link PinnedRoot.close} at the end of the scope. */
  [Symbol.dispose](): void {
    this.close()
  }

  /** `await using root = await PinnedRoot.open(dir)`: {@link PinnedRoot.close} at the end of the scope. */
  async [Symbol.asyncDispose](): Promise<void> {
    this.close()
  }

  // fileops: copies, links, times, truncate, lchown (logic in src/root/; docs/pinnedroot.md).

  /**
   * Copies the regular file `src` to `dest`, as `fs.promises.copyFile`; `mode` takes
   * `fs.constants.COPYFILE_EXCL`, `COPYFILE_FICLONE`, `COPYFILE_FICLONE_FORCE`. Published whole
   * (a temporary, then a rename): an interrupted copy leaves the old `dest`.
   */
  async copyFile(src: string, dest: string, mode?: number): Promise<void> {
    return copyFile(this, src, dest, mode)
  }

  /** Copies a file, a link (as a link) or, with `recursive`, a tree, as `fs.promises.cp`. */
  async cp(src: string, dest: string, options?: CpOptions): Promise<void> {
    return cp(this, src, dest, options)
  }

  /** Makes a symbolic link at `path`; text that is absolute or climbs above the root is refused. */
  async symlink(target: string, path: string, type?: string | null): Promise<void> {
    return symlink(this, target, path, type)
  }

  /** Makes `newPath` a hard link to `existingPath` (a final link is linked itself). */
  async link(existingPath: string, newPath: string): Promise<void> {
    return link(this, existingPath, newPath)
  }

  /** Sets access and modification times (`Date`s or seconds); a final link is refused. */
  async utimes(path: string, atime: Date | number, mtime: Date | number): Promise<void> {
    return utimes(this, path, atime, mtime)
  }

  /** Truncates (or extends with zeros) a regular, single-link file to `len` bytes. */
  async truncate(path: string, len = 0): Promise<void> {
    return truncate(this, path, len)
  }

  /** Sets the owner and group of `path`, of a final link itself (`-1` keeps one as it is). */
  async lchown(path: string, uid: number, gid: number): Promise<void> {
    return lchown(this, path, uid, gid)
  }

  /**
   * Replaces the file at `path` with `data` only while it is what `options` expects (its content,
   * its `"dev:ino"`): else nothing is written and the `changed` refusal (`Busy`) says so. Atomic, as
   * `writeFile(..., { atomic: true })`; a write that lands during the swap is caught and undone.
   */
  async replaceIfUnchanged(path: string, data: Uint8Array | string, options: ReplaceIfUnchangedOptions): Promise<void> {
    return replaceIfUnchanged(this, path, data, options)
  }

  /** Removes the file at `path` only while it is what `options` expects, as {@link replaceIfUnchanged}. */
  async removeIfUnchanged(path: string, options: Expectation): Promise<void> {
    return removeIfUnchanged(this, path, options)
  }
}

/**
 * The codes a batch member may name, by its operation: the table's compact reads and resolves
 * (never a write), and the string form of each that has one, which is its own code decoded here.
 */
const batchCodes: ReadonlyMap<string, number> = new Map(
  native.opTable
    .filter((r) => r.pathOnly && r.effect !== "Write")
    .flatMap(
      (r): Array<[string, number]> =>
        r.text
          ? [
              [r.name, r.code],
              [`${r.name}String`, r.code]
            ]
          : [[r.name, r.code]]
    )
)

const batchOp = (r: unknown): number => {
  if (typeof r !== "object" || r === null) throw badArgumentPinnedFsError("batch member must be an object")
  const op = (r as { operation?: unknown }).operation
  const code = typeof op === "string" ? batchCodes.get(op) : undefined
  if (code === undefined) throw badArgumentPinnedFsError(`batch member operation '${String(op)}' is not a read`)
  return code
}
