/**
 * Loads the compiled addon: a prebuild from `prebuilds/` when one fits this platform, else the
 * binary `node-gyp` built from source at install time. One place, so a missing binary is one
 * actionable message rather than a stack trace from deep inside an operation.
 *
 * @internal
 */
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { OpColumns, OpName } from "../protocol/opTable.ts"

/** The shape of a JavaScript value the addon hands back for an error. */
export interface NativeErrorInfo {
  readonly code: string
  readonly errno: number
  readonly syscall: string
  readonly path: string
  readonly refusal:
    | ""
    | "symlink"
    | "escape"
    | "hardlink"
    | "notregular"
    | "badargument"
    | "identity"
    | "toolarge"
    | "writezero"
    | "changed"
  readonly description: string
}

export interface NativeRootHandle {
  /** The root identity (see `PinnedRoot.identity`). */
  readonly identity: string
  readonly strategy: "openat2" | "walk" | "nofollow_any"
  readonly path: string
  /**
   * `verifyRoot`: `true` re-checks, in the worker before the work, that the root path still names
   * the pinned directory; a string also checks that second spelling of the root (a logical root
   * that may pass through links). Either mismatch is the `identity` refusal naming that spelling.
   */
  execute(request: NativeRequest, verifyRoot?: boolean | string): Promise<unknown>
  batch(
    requests: ReadonlyArray<NativeRequest>,
    /** `member`: most bytes of one member's file (default and ceiling 2 GiB - 1). */
    limits: { readonly size: number; readonly response: number; readonly member?: number },
    verifyRoot?: boolean | string
  ): Promise<Array<{ readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: NativeErrorInfo }>>
  /**
   * One path-only read (exists, stat, readFile, readDirectory, readLink, realPath, resolve): the
   * same core call as `execute`, with its operands as arguments instead of a request object.
   * `verifyRoot` as `execute`'s (absent: nothing re-checked).
   */
  call(op: number, path: string, recursive?: boolean, limit?: number, verifyRoot?: boolean | string): Promise<unknown>
  /**
   * A batch of path-only reads, compactly: `ops[i]` (`refusedMember`: refused by the caller, not run), `paths[i]`,
   * `recursive[i]`. Answers `[failed, values]`: `values[i]` is member i's value, or its error when
   * `failed[i]` is 1. `memberLimit` bounds each member's file as `batch`'s `limits.member` does.
   */
  readMany(
    ops: Uint8Array,
    paths: ReadonlyArray<string>,
    recursive: Uint8Array,
    size: number,
    response: number,
    verifyRoot?: boolean | string,
    memberLimit?: number
  ): Promise<[Uint8Array, Array<unknown>]>
  /**
   * A pinnedfs/confine program (discover or hold) in its byte form; answers the byte form and a
   * function that cancels the program between directories. Descriptors an answer names are the
   * caller's to close.
   */
  confine(request: Uint8Array): [Promise<Buffer>, () => void]
  close(): void
  /**
   * `execute` (no root re-check), with a function that asks the worker to stop between acts (an
   * atomic flag; calling it never waits). A stopped request rejects with code `ECANCELED`.
   */
  cancellable(request: NativeRequest, verifyRoot?: boolean | string): [Promise<unknown>, () => void]
  /** A root pinned at a directory beneath this one, by this root's resolution (`PinnedRoot.openRoot`). */
  openRoot(path: string): Promise<NativeRootHandle>
  /**
   * A descriptor on a regular file beneath the root (`{ op: ops.open, path, flag, mode? }`; flags r,
   * r+, w, wx, a, ax), checked on that descriptor: no link, one link, a regular file. The number is
   * the caller's to close. `verifyRoot` as `execute`'s.
   */
  open(request: NativeRequest, verifyRoot?: boolean | string): Promise<number>
  /** `open` with its operands as arguments (`flag` from `flags`): the file handle's hot path. */
  openPath(path: string, flag: number, mode: number | undefined, verifyRoot?: boolean | string): Promise<number>
}

/** A request as the addon reads it: numeric `op` and `flag`, paths relative to the root. */
export interface NativeRequest {
  readonly op: number
  readonly path?: string
  readonly to?: string
  readonly pattern?: string
  readonly exclude?: ReadonlyArray<string>
  readonly dot?: boolean
  /** glob: also answer the names that are not UTF-8, marked (see `PinnedRoot.globListing`). */
  readonly unnamed?: boolean
  readonly recursive?: boolean
  readonly force?: boolean
  /** remove, recursive: answer a wide directory's directories rather than removing them (src/root/removeWide.ts). */
  readonly split?: boolean
  /** writeFile: always the replacement, never in place (see `WriteOptions.atomic`). */
  readonly atomic?: boolean
  /** writeFile: in place, as Node's `fs.writeFile`. */
  readonly inPlace?: boolean
  /** writeFile: fsync the data before publishing it, and the directory after. */
  readonly durable?: boolean
  /** rename: refuse an existing destination in the rename itself (RENAME_NOREPLACE). */
  readonly noReplace?: boolean
  readonly mode?: number
  readonly uid?: number
  readonly gid?: number
  readonly flag?: number
  readonly data?: Uint8Array | string
  /**
   * writeFile: `data` is strict padded base64 text, decoded by the worker before anything is
   * opened; text that is not is refused (`BadArgument`, "data is not valid base64").
   */
  readonly base64?: boolean
  /** readFile: most bytes of content (1 to 2 GiB - 1; absent: 2 GiB - 1). */
  readonly maxBytes?: number
  readonly plan?: ReadonlyArray<{ readonly path: string; readonly mode?: number }>
  readonly owned?: ReadonlyArray<{ readonly path: string; readonly identity: string; readonly optional?: boolean }>
  /** symlink: the link's text. */
  readonly target?: string
  /** copyFile, cp: `fs.constants.COPYFILE_*` bits. */
  readonly copyMode?: number
  /** cp: with `force` false, an existing destination is an error rather than kept. */
  readonly errorOnExist?: boolean
  /** utimes: seconds since the epoch. */
  readonly atime?: number
  readonly mtime?: number
  /** truncate: the new length. */
  readonly length?: number
  /** replaceIfUnchanged, removeIfUnchanged: the content the file is expected to hold. */
  readonly expect?: Uint8Array | string
  /**
   * replaceIfUnchanged, removeIfUnchanged: the `"dev:ino"` the file is expected to have; remove: the
   * one its parent directory must have, or nothing is done (a split's directories, see `split`).
   */
  readonly identity?: string
}

export interface NativeBinding {
  pin(path: string, strategy: "auto" | "openat2" | "walk", symlinks?: "refuse" | "within"): Promise<NativeRootHandle>
  /** `"dev:ino"` of the directory a trusted path names (what the confinement anchors record). */
  identify(path: string): Promise<string>
  /**
   * The root identity of the directory a trusted path names: what `pin(path).identity` is,
   * `"dev:ino"` and its birth time or generation (see `PinnedRoot.identity`).
   */
  identifyRoot(path: string): Promise<string>
  /**
   * Trips off the JavaScript thread made by this environment so far (for tests that count them).
   * A test hook: absent from the published prebuilds, as `testAfterPlan` is ignored there.
   */
  trips?(): number
  /**
   * Thread-pool work items this environment has started so far: requests share them (a turn's
   * requests queue behind a few runners). A test hook, as `trips`.
   */
  workItems?(): number
  /** Whether this build carries the test hooks (`trips`, mkdirs' `testAfterPlan`). */
  readonly testHooks: boolean
  /** Completions this environment has settled in a later turn than they finished in (a paced flood). */
  paced(): number
  /**
   * The process's budget of content bytes in flight, set first when `bytes` is given (0: the
   * default): `[budget, inFlight]`. See `contentBudget` (src/budget.ts).
   */
  contentBudget(bytes?: number): [number, number]
  /** Each operation's wire code, by name (the `text` column of the operation table). */
  readonly ops: Readonly<Record<OpName, number>>
  /**
   * The operation table (native/core/request.h), one row per operation, indexed by code: the same
   * rows as `src/protocol/opTable.ts`, which is generated from that header.
   */
  readonly opTable: ReadonlyArray<OpColumns>
  readonly flags: Readonly<Record<"r" | "r+" | "w" | "wx" | "w+" | "wx+" | "a" | "ax" | "a+" | "ax+", number>>
  /** The readMany op code of a member the caller already refused: it is not run. */
  readonly refusedMember: number
  /**
   * Whether `resolve` and `realPath` may answer a name in another spelling than the one asked (the
   * stored one, where a volume folds case: macOS); elsewhere a path with no link on it is answered
   * as it was asked.
   */
  readonly spellingMayDiffer: boolean
  /**
   * How a stat answers: the slots of its one Float64Array, by name (the number form, then the
   * exact 64-bit integers, then the nanosecond times), and the names of its type codes. See
   * `src/internal/statRecord.ts`.
   */
  readonly statRecord: {
    readonly numbers: ReadonlyArray<string>
    readonly exact: ReadonlyArray<string>
    readonly nanos: ReadonlyArray<string>
    readonly types: ReadonlyArray<string>
  }
}

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

/** What a source build needs, for the two messages below. */
const sourceBuild =
  "A source build needs Python 3, make and a C++17 compiler (Debian/Ubuntu: build-essential; " +
  "Alpine: build-base python3; macOS: the Xcode command line tools)."

const platform = () => `${process.platform}-${process.arch} (Node ${process.versions.node}, N-API ${process.versions.napi})`

const load = (): NativeBinding => {
  const require = createRequire(import.meta.url)
  const nodeGypBuild = require("node-gyp-build") as { path(dir: string): string }
  let file: string
  try {
    file = nodeGypBuild.path(packageRoot)
  } catch (cause) {
    throw new Error(
      `pinnedfs: no native binary for ${platform()}: the package ships prebuilds for linux-x64 and ` +
        `linux-arm64 (glibc), and none was built from source in ${packageRoot}. ` +
        `Run \`npm rebuild pinnedfs\` to build it. ${sourceBuild}`,
      { cause }
    )
  }
  try {
    return require(file) as NativeBinding
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause)
    throw new Error(
      `pinnedfs: a native binary was found and failed to load: ${reason}\n` +
        `  binary: ${file}\n  platform: ${platform()}\n` +
        `Run \`npm rebuild pinnedfs --build-from-source\` to build one for this machine. ${sourceBuild}`,
      { cause }
    )
  }
}

/** The addon, loaded once per JavaScript environment (each worker thread loads its own). */
export const native: NativeBinding = load()
