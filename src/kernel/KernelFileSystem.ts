/**
 * The permission kernel: a layer over Effect's own `FileSystem` tag that takes the host's service
 * out of context and puts a guarded one in its place, so every consumer of `FileSystem.FileSystem`,
 * including code that never heard of the kernel, asks a grant store first.
 *
 * It is a drop-in for the client's kernel module: the same exports, the same answers, the same
 * grant-store questions in the same order, plus additions that are each strictly safer and listed
 * in docs/kernel.md (the path acted through asked about as well, refusals that do not describe what
 * lies behind a denied path, trees authorized entry by entry, renames authorized as reads, listings
 * filtered by the read grants, temporary names and copies made from executor requests alone).
 *
 * Every path operation is authorized, then executed as one request of the atomic host extension
 * on the path the caller gave, normalized, stamped with the root pinned when the layer was built.
 * A host without the extension cannot confine anything: every method fails closed with
 * `PermissionDenied`.
 *
 * @since 0.1.0
 */
import { Effect, FileSystem, Layer, Option, Path, PlatformError } from "effect"
import { type AtomicFileSystem, AtomicFileSystemTypeId, type AtomicHostFileSystem } from "../protocol/wire.ts"
import { FileSystemFault } from "./Fault.ts"
import { FileSystemBatchTypeId } from "./FileSystemBatch.ts"
import { GrantStore } from "./GrantStore.ts"
import { makeAuthorizer } from "./internal/authorize.ts"
import { makeBatch } from "./internal/batch.ts"
import { makeConfinedView } from "./internal/confinedView.ts"
import { makeGuarded } from "./internal/guarded.ts"
import { withIsolatedFileSystem as attest } from "./internal/isolated.ts"
import type { Root } from "../protocol/root.ts"
import { identifyRoot } from "./internal/pinning.ts"
import { description, refusing, unconfined } from "./internal/refusing.ts"
import { Workspace } from "./Workspace.ts"

export {
  /** @since 0.1.0 */
  AtomicFileSystemTypeId,
  /** @since 0.1.0 */
  withAtomicFileSystem
} from "../protocol/wire.ts"

export type {
  /** @since 0.1.0 */
  AtomicBatchRequest,
  /** @since 0.1.0 */
  AtomicBatchResponse,
  /** @since 0.1.0 */
  AtomicBatchValue,
  /** @since 0.1.0 */
  AtomicFileSystem,
  /** @since 0.1.0 */
  AtomicHostFileSystem,
  /** @since 0.1.0 */
  AtomicRequest,
  /** @since 0.1.0 */
  AtomicResult,
  /** @since 0.1.0 */
  AtomicResults,
  /** @since 0.1.0 */
  AtomicRoot,
  /** @since 0.1.0 */
  Resolution
} from "../protocol/wire.ts"

export {
  /** @since 0.1.0 */
  FileSystemFault,
  /** @since 0.1.0 */
  FileSystemFaultCode
} from "./Fault.ts"

export type {
  /** @since 0.1.0 */
  AtomicHandlers
} from "./internal/isolated.ts"

/**
 * The name that stands for the host's temporary directory in a capability: a temporary entry made
 * without a `directory` is authorized as a write to `<system-temp>` beside the workspace root, a
 * resource no workspace grant can cover by accident.
 *
 * @since 0.1.0
 * @category models
 */
export const systemTemporaryDirectoryName = "<system-temp>"

/**
 * What every refusal of an unconfinable operation says.
 *
 * @since 0.1.0
 * @category models
 */
export const unconfinedDescription: string = description

/** The brand a confined view (and a guarded service) carries: the logical root it is pinned to. */
const ConfinedFileSystemTypeId = Symbol.for("@smthrs/kernel/ConfinedFileSystem")

const atomicOf = (fileSystem: FileSystem.FileSystem): AtomicFileSystem | undefined =>
  (fileSystem as Partial<AtomicHostFileSystem>)[AtomicFileSystemTypeId]

/**
 * Attests that `fileSystem` is isolated as a whole (a browser or test volume that cannot address
 * the host file system at all) and attaches an executor that delegates to it. Throws a
 * `FileSystemFault` (`executor_already_present`) for a file system that already carries an
 * executor: that executor is the stronger guarantee.
 *
 * @since 0.1.0
 * @category constructors
 */
export const withIsolatedFileSystem: (fileSystem: FileSystem.FileSystem) => AtomicHostFileSystem = attest

/**
 * Whether {@link confined} can build a view over this file system: it carries the atomic host
 * extension (a descriptor-relative executor or an isolation attestation), or it is already a
 * confined view or a guarded service. A plain path-based host answers `false`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isConfinable = (fileSystem: FileSystem.FileSystem): boolean =>
  ConfinedFileSystemTypeId in fileSystem || AtomicFileSystemTypeId in fileSystem

/**
 * The logical root a file system is already confined to (a confined view's, or a guarded service's
 * workspace root); `undefined` for any other, including a host that is merely confinable.
 *
 * @since 0.1.0
 * @category guards
 */
export const confinedRoot = (fileSystem: FileSystem.FileSystem): string | undefined =>
  (fileSystem as { readonly [ConfinedFileSystemTypeId]?: string })[ConfinedFileSystemTypeId]

/**
 * Fails with the `PermissionDenied` refusal unless {@link confined} can build a view over this file
 * system: a composition-time check for layers that pin their root later.
 *
 * @since 0.1.0
 * @category guards
 */
export const requireConfinable = (fileSystem: FileSystem.FileSystem, root: string): Effect.Effect<void, PlatformError.PlatformError> =>
  isConfinable(fileSystem) ? Effect.void : Effect.fail(unconfined("confined", root))

export {
  /**
   * The resource a path names for a host asked for its own `realPath` (see `internal/canonical.ts`).
   *
   * @since 0.1.0
   * @category security
   */
  canonicalResource
} from "./internal/canonical.ts"

const rootChanged = (logicalRoot: string, cause: unknown) =>
  PlatformError.systemError({
    _tag: "Busy",
    module: "FileSystem",
    method: "batch",
    pathOrDescriptor: logicalRoot,
    description: "batch root no longer names the authorized descriptor",
    cause
  })

/**
 * Builds the guarded file system over the host in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<
  FileSystem.FileSystem,
  PlatformError.PlatformError,
  FileSystem.FileSystem | Path.Path | Workspace | GrantStore
> = Effect.gen(function* () {
  const host = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const workspace = yield* Workspace
  const grants = yield* GrantStore
  const atomic = atomicOf(host)
  const logicalRoot = path.normalize(path.resolve(workspace.root))
  const normalize = (value: string) => path.normalize(path.isAbsolute(value) ? value : path.resolve(logicalRoot, value))
  const systemTemp = path.resolve(logicalRoot, "..", systemTemporaryDirectoryName)
  const boundaryRoot = yield* host.realPath(logicalRoot)
  if (atomic === undefined) {
    return Object.assign(refusing(normalize, systemTemp), { [ConfinedFileSystemTypeId]: logicalRoot })
  }
  // An attested volume with no batch protocol needs no identity: its attestation is its boundary.
  const rootIdentity =
    atomic.isolated !== undefined && atomic.batchLimits === undefined
      ? Option.none<string>()
      : yield* identifyRoot(atomic, host, boundaryRoot)
  const root: Root<string | undefined> = { boundaryRoot, logicalRoot, rootIdentity: Option.getOrUndefined(rootIdentity) }
  const auth = makeAuthorizer({ path, root, atomic, grants, host })
  const guarded = Object.assign(makeGuarded({ auth, systemTemp }), { [ConfinedFileSystemTypeId]: logicalRoot })
  if (atomic.batchLimits === undefined) return guarded
  // A vanished or replaced workspace is a lost boundary, not N missing files: its logical path must
  // still name the directory pinned here (the executor checks the canonical one on its side).
  const verifyRoot = identifyRoot(atomic, host, logicalRoot).pipe(
    Effect.mapError((cause) => rootChanged(logicalRoot, cause)),
    Effect.flatMap((now) =>
      Option.isSome(now) && now.value === root.rootIdentity
        ? Effect.void
        : Effect.fail(
            rootChanged(
              logicalRoot,
              new FileSystemFault({ code: "workspace_identity_changed", message: "workspace descriptor identity changed" })
            )
          )
    )
  )
  return Object.assign(guarded, { [FileSystemBatchTypeId]: makeBatch(auth, atomic.batchLimits, verifyRoot) })
})

/**
 * The kernel as a layer: over a host `FileSystem` it provides the guarded `FileSystem`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  FileSystem.FileSystem,
  PlatformError.PlatformError,
  FileSystem.FileSystem | Path.Path | Workspace | GrantStore
> = Layer.effect(FileSystem.FileSystem, make)

/**
 * A view of `fileSystem` confined to `root` without grant checks, for machinery that must not ask
 * a grant store about its own bookkeeping (journals, caches) but must never be carried outside the
 * workspace: every path operation is one executor request against the root pinned here (its
 * canonical path and identity), so nothing it does leaves `root`. Every method that cannot be one
 * such request (`access`, `copy`, `copyFile`, `link`, `symlink`, `open`, `stream`, `sink`,
 * `truncate`, `utimes`, `watch` and every `makeTemp*`) is refused. An isolated volume is returned
 * as it is (its attestation is the boundary), and so is a view or guarded service already pinned
 * to the same root. Refused over a host without the extension. The root must exist.
 *
 * @since 0.1.0
 * @category constructors
 */
export const confined = (
  fileSystem: FileSystem.FileSystem,
  root: string
): Effect.Effect<FileSystem.FileSystem, PlatformError.PlatformError, Path.Path> =>
  Effect.gen(function* () {
    const path = yield* Path.Path
    const logicalRoot = path.resolve(root === "" ? "." : root)
    if (confinedRoot(fileSystem) === logicalRoot) return fileSystem
    const atomic = atomicOf(fileSystem)
    if (atomic === undefined) return yield* Effect.fail(unconfined("confined", logicalRoot))
    if (atomic.isolated !== undefined) return fileSystem
    const boundaryRoot = yield* fileSystem.realPath(logicalRoot)
    const rootIdentity = yield* identifyRoot(atomic, fileSystem, boundaryRoot)
    if (Option.isNone(rootIdentity)) return yield* Effect.fail(unconfined("confined", logicalRoot))
    const view = makeConfinedView(atomic, path, { boundaryRoot, logicalRoot, rootIdentity: rootIdentity.value })
    return Object.assign(view, { [ConfinedFileSystemTypeId]: logicalRoot })
  })
