/**
 * pinnedfs extensions beyond the client's protocol (`wire.ts`): operations and batch members the
 * kernel's wire contract does not name, accepted by the same `execute` with the same root triple
 * and the same rules (absolute paths inside one of the two roots, no link followed, `BadArgument`
 * for a malformed shape).
 *
 * - `mkdirs` / `rmdirs`: the pinned-parent directory programs (contract, "Pinned-parent directory
 *   programs"), one trip each.
 * - a `glob` batch member (`{ operation: "glob", path: <absolute pattern>, root, options }`), the
 *   shape a kernel's batch framing gives a glob read.
 * - `open`: a member of its own rather than a request, since its answer is a live handle, not a
 *   value a request can carry (see {@link OpenFileRequest}).
 *
 * @since 0.1.0
 */
import type { Effect, FileSystem, PlatformError, Scope } from "effect"
import type { AtomicFileSystem, AtomicRequest, AtomicResults } from "./wire.ts"
import type { RootFields } from "./root.ts"

/**
 * One directory of a `mkdirs` program: an absolute path and the exact mode to give it if the
 * program creates it (default `0o777`; set with `chmod` after creation, so the umask does not
 * decide it).
 *
 * @since 0.1.0
 * @category models
 */
export interface PlannedDirectory {
  readonly path: string
  readonly mode?: number | undefined
}

/**
 * `mkdirs`: create the planned directories, parent before child, each with `mkdirat` on a handle of
 * its pinned parent. A conflict stops the program before any chmod.
 *
 * @since 0.1.0
 * @category models
 */
export type MkdirsRequest = RootFields & {
  readonly operation: "mkdirs"
  readonly plan: ReadonlyArray<PlannedDirectory>
}

/**
 * What `mkdirs` answers. Every directory it created is listed with its identity (the caller's
 * cleanup ownership) even when a later step failed; `error` says why it stopped. A failure to run
 * the program at all (malformed plan, root changed) fails the effect instead.
 *
 * @since 0.1.0
 * @category models
 */
export interface MkdirsResult {
  readonly created: ReadonlyArray<{ readonly path: string; readonly identity: string }>
  readonly error: PlatformError.PlatformError | null
}

/**
 * A directory a previous `mkdirs` created, as that program reported it.
 *
 * @since 0.1.0
 * @category models
 */
export interface OwnedDirectory {
  readonly path: string
  /** `"dev:ino"` recorded at creation; the directory is removed only while it still has it. */
  readonly identity: string
  /** An optional member's refusal lets the program continue; a required one's stops it. */
  readonly optional?: boolean | undefined
}

/**
 * `rmdirs`: remove owned directories, child before parent, each through its pinned parent.
 *
 * @since 0.1.0
 * @category models
 */
export type RmdirsRequest = RootFields & {
  readonly operation: "rmdirs"
  readonly owned: ReadonlyArray<OwnedDirectory>
}

/**
 * What `rmdirs` answers, one member per owned directory in the order the program ran them: a
 * non-empty directory is `kept` quietly, a changed one is `refused` with its error.
 *
 * @since 0.1.0
 * @category models
 */
export interface RmdirsResult {
  readonly members: ReadonlyArray<{
    readonly path: string
    readonly status: "removed" | "kept" | "missing" | "refused"
    readonly error: PlatformError.PlatformError | null
  }>
  /** A required member was refused and the program stopped there. */
  readonly stopped: boolean
}

/**
 * A glob read in a batch: `path` is the absolute pattern, `root` the directory it was resolved
 * from. Its value is `{ operation: "glob", value: paths }`, paths absolute as for `glob`.
 *
 * @since 0.1.0
 * @category models
 */
export interface GlobBatchRequest {
  readonly operation: "glob"
  readonly path: string
  readonly root: string
  readonly options?: { readonly exclude?: ReadonlyArray<string> | undefined } | undefined
}

/**
 * The operations pinnedfs adds.
 *
 * @since 0.1.0
 * @category models
 */
export type ExtensionRequest = MkdirsRequest | RmdirsRequest

/**
 * What the added operations answer.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExtensionResults {
  readonly mkdirs: MkdirsResult
  readonly rmdirs: RmdirsResult
}

/**
 * Every request pinnedfs's `execute` takes: the wire contract's and the extensions.
 *
 * @since 0.1.0
 * @category models
 */
export type PinnedRequest = AtomicRequest | ExtensionRequest

/**
 * Every operation's result.
 *
 * @since 0.1.0
 * @category models
 */
export interface PinnedResults extends AtomicResults, ExtensionResults {}

/**
 * The result type of one request.
 *
 * @since 0.1.0
 * @category models
 */
export type PinnedResult<R extends PinnedRequest> = PinnedResults[R["operation"]]

/**
 * The extension pinnedfs attaches: a wire-contract `AtomicFileSystem` whose `execute` also takes
 * the extension operations, and whose limits are always advertised.
 *
 * @since 0.1.0
 * @category models
 */
export interface PinnedAtomicFileSystem extends AtomicFileSystem {
  readonly noFollowAuthorization: true
  /**
   * `resolve` answers a path with no link on it spelled as it was asked (every platform but
   * macOS, whose case-folding volumes answer the stored spelling). A kernel may then take a request
   * that proved no link lay on its path as proof of what the resolution would have answered.
   */
  readonly resolvesAsAsked: boolean
  readonly identifyRoot: (path: string) => Effect.Effect<string, PlatformError.PlatformError>
  readonly execute: <R extends PinnedRequest>(request: R) => Effect.Effect<PinnedResult<R>, PlatformError.PlatformError>
  readonly batchLimits: { readonly size: number; readonly response: number }
  readonly contentLimit: number
  /**
   * Closes every pinned root this extension holds (operations in flight finish first). Later
   * requests pin again. The layers call it when their scope closes.
   */
  readonly close: () => void
  /**
   * Opens a regular file beneath the pinned root, by the same resolution as every request (no
   * link followed, no hard-linked file, no `..` above the root), for the life of the scope.
   * Closing the extension closes every handle it opened.
   */
  readonly open: (request: OpenFileRequest) => Effect.Effect<FileSystem.File, PlatformError.PlatformError, Scope.Scope>
}

/**
 * What `open` is asked: an absolute path inside one of the roots, Effect's open flag (`r`, `r+`,
 * `w`, `wx`, `a` or `ax`; the `+` forms of `w` and `a` are a `BadArgument`) and, for a file it
 * creates, its mode.
 *
 * @since 0.2.0
 * @category models
 */
export type OpenFileRequest = RootFields & {
  readonly operation: "open"
  readonly path: string
  readonly options?: { readonly flag?: FileSystem.OpenFlag | undefined; readonly mode?: number | undefined } | undefined
}

/**
 * The `open` member of an extension that offers one (pinnedfs's does; the client's contract has
 * none).
 *
 * @since 0.2.0
 * @category guards
 */
export const openMemberOf = (atomic: AtomicFileSystem): PinnedAtomicFileSystem["open"] | undefined => {
  const open = (atomic as Partial<PinnedAtomicFileSystem>).open
  return typeof open === "function" ? open : undefined
}
