/**
 * The wire contract between a permission kernel and an atomic host extension: the symbol the
 * extension is found under, the request each operation sends, and the result each answers. These
 * names and shapes are fixed by the kernel that calls us; they are spelled here exactly, and
 * nothing else in pinnedfs decides them.
 *
 * Every request carries the pinned-root triple: `boundaryRoot` (canonical path), `logicalRoot` (the
 * workspace as the caller spells it) and `rootIdentity` (the root's identity, `"dev:ino"` and its
 * birth time or generation: `rootIdentityPattern` in `root.ts`). Paths are absolute, inside one of
 * the two roots.
 *
 * @since 0.1.0
 */
import type { Effect, FileSystem, PlatformError, Result } from "effect"
import type { RootFields } from "./root.ts"

export type { Root, RootFields } from "./root.ts"

/**
 * The global symbol a host `FileSystem` service carries its extension under.
 *
 * @since 0.1.0
 * @category symbols
 */
export const AtomicFileSystemTypeId: unique symbol = Symbol.for("@smthrs/kernel/AtomicFileSystem") as never

/** @since 0.1.0 @category symbols */
export type AtomicFileSystemTypeId = typeof AtomicFileSystemTypeId

/**
 * The root triple as a request carries it.
 *
 * @since 0.1.0
 * @category models
 * @deprecated Use `RootFields` (the one root type, `pinnedfs/effect` exports both); kept so code
 * written against 0.1.0 still compiles.
 */
export type AtomicRoot = RootFields

/** @since 0.1.0 @category models */
export type WriteOptions = { readonly flag?: FileSystem.OpenFlag | undefined; readonly mode?: number | undefined } | undefined

/**
 * One operation, discriminated by `operation`, each member carrying exactly its own operands.
 *
 * @since 0.1.0
 * @category models
 */
export type AtomicRequest =
  | (RootFields & { readonly operation: "exists"; readonly path: string })
  | (RootFields & { readonly operation: "chmod"; readonly path: string; readonly options: { readonly mode: number } })
  | (RootFields & {
      readonly operation: "chown"
      readonly path: string
      readonly options: { readonly uid: number; readonly gid: number }
    })
  | (RootFields & {
      readonly operation: "glob"
      readonly pattern: string
      readonly root: string
      readonly options?: { readonly exclude?: ReadonlyArray<string> | undefined } | undefined
    })
  | (RootFields & {
      readonly operation: "makeDirectory"
      readonly path: string
      readonly options?: { readonly recursive?: boolean | undefined; readonly mode?: number | undefined } | undefined
    })
  | (RootFields & {
      readonly operation: "readDirectory"
      readonly path: string
      readonly options?: { readonly recursive?: boolean | undefined } | undefined
    })
  | (RootFields & { readonly operation: "readFile"; readonly path: string })
  | (RootFields & { readonly operation: "readFileString"; readonly path: string; readonly encoding?: string | undefined })
  | (RootFields & { readonly operation: "readLink"; readonly path: string })
  | (RootFields & { readonly operation: "realPath"; readonly path: string })
  | (RootFields & { readonly operation: "resolve"; readonly path: string })
  | (RootFields & {
      readonly operation: "remove"
      readonly path: string
      readonly options?: { readonly recursive?: boolean | undefined; readonly force?: boolean | undefined } | undefined
    })
  | (RootFields & { readonly operation: "rename"; readonly from: string; readonly to: string })
  | (RootFields & { readonly operation: "stat"; readonly path: string })
  | (RootFields & {
      readonly operation: "writeFile"
      readonly path: string
      /** Base64 of the bytes, at most the extension's `contentLimit` bytes once decoded. */
      readonly data: string
      readonly options?: WriteOptions
    })
  | (RootFields & {
      readonly operation: "writeFileString"
      readonly path: string
      readonly data: string
      readonly options?: WriteOptions
    })
  | (RootFields & { readonly operation: "batch"; readonly requests: ReadonlyArray<AtomicBatchRequest> })

/**
 * Where a no-follow `resolve` walk stopped: `target: null` and `path` the whole request, or `path`
 * the first link met and `target` its text (read without opening what it names).
 *
 * @since 0.1.0
 * @category models
 */
export interface Resolution {
  readonly path: string
  readonly target: string | null
}

/**
 * A public read that may travel in a batch.
 *
 * @since 0.1.0
 * @category models
 */
export type BatchRequest =
  | { readonly operation: "exists"; readonly path: string }
  | { readonly operation: "stat"; readonly path: string }
  | { readonly operation: "readFile"; readonly path: string }
  | { readonly operation: "readFileString"; readonly path: string; readonly encoding?: string | undefined }
  | {
      readonly operation: "readDirectory"
      readonly path: string
      readonly options?: { readonly recursive?: boolean | undefined } | undefined
    }
  | { readonly operation: "readLink"; readonly path: string }
  | { readonly operation: "realPath"; readonly path: string }
  | {
      readonly operation: "glob"
      /** The absolute pattern (the kernel reads it against `root`). */
      readonly path: string
      readonly root: string
      readonly options?: { readonly exclude?: ReadonlyArray<string> | undefined } | undefined
    }

/**
 * A public read's value in a batch answer: `{ operation, value }`.
 *
 * @since 0.1.0
 * @category models
 */
export type BatchValue =
  | { readonly operation: "exists"; readonly value: boolean }
  | { readonly operation: "stat"; readonly value: FileSystem.File.Info }
  | { readonly operation: "readFile"; readonly value: Uint8Array }
  | { readonly operation: "readFileString"; readonly value: string }
  | { readonly operation: "readDirectory"; readonly value: Array<string> }
  | { readonly operation: "readLink"; readonly value: string }
  | { readonly operation: "realPath"; readonly value: string }
  | { readonly operation: "glob"; readonly value: Array<string> }

/** A batch member: a public read, or authorization's `resolve`. @since 0.1.0 @category models */
export type AtomicBatchRequest = BatchRequest | { readonly operation: "resolve"; readonly path: string }

/** A batch member's value. @since 0.1.0 @category models */
export type AtomicBatchValue = BatchValue | { readonly operation: "resolve"; readonly resolution: Resolution }

/**
 * A batch's answer: one entry per member, each with its own `Result`, so one missing file fails
 * alone.
 *
 * @since 0.1.0
 * @category models
 */
export interface AtomicBatchResponse {
  readonly rootIdentity: string
  readonly entries: ReadonlyArray<{
    readonly index: number
    readonly path: string
    readonly result: Result.Result<AtomicBatchValue, PlatformError.PlatformError>
  }>
}

/**
 * The value each operation answers.
 *
 * @since 0.1.0
 * @category models
 */
export interface AtomicResults {
  readonly exists: boolean
  readonly chmod: void
  readonly chown: void
  readonly glob: Array<string>
  readonly makeDirectory: void
  readonly readDirectory: Array<string>
  readonly readFile: Uint8Array
  readonly readFileString: string
  readonly readLink: string
  readonly realPath: string
  readonly resolve: Resolution
  readonly remove: void
  readonly rename: void
  readonly stat: FileSystem.File.Info
  readonly writeFile: void
  readonly writeFileString: void
  readonly batch: AtomicBatchResponse
}

/** The result type of one request. @since 0.1.0 @category models */
export type AtomicResult<R extends AtomicRequest> = AtomicResults[R["operation"]]

/**
 * The host extension a kernel finds under {@link AtomicFileSystemTypeId}.
 *
 * @since 0.1.0
 * @category models
 */
export interface AtomicFileSystem {
  /** The executor refuses symlinks and hard links itself, so authorization resolves through it. */
  readonly noFollowAuthorization?: true | undefined
  /**
   * The identity of the directory a path names (a link is followed: a workspace given through one
   * is identified by its target): `"dev:ino"` from 64-bit values (never a JS number), then its birth
   * time or generation number where the file system has one. A kernel compares it as an opaque
   * string.
   */
  readonly identifyRoot?: ((path: string) => Effect.Effect<string, PlatformError.PlatformError>) | undefined
  readonly execute: <R extends AtomicRequest>(request: R) => Effect.Effect<AtomicResult<R>, PlatformError.PlatformError>
  /** A filesystem already isolated as a whole; pinnedfs never sets it. */
  readonly isolated?: FileSystem.FileSystem | undefined
  readonly batchLimits?: { readonly size: number; readonly response: number } | undefined
  /** Most bytes of one `writeFile` payload. */
  readonly contentLimit?: number | undefined
}

/** @since 0.1.0 @category models */
export type AtomicHostFileSystem = FileSystem.FileSystem & { readonly [AtomicFileSystemTypeId]: AtomicFileSystem }

/**
 * Attaches an extension to a `FileSystem` service (replacing any earlier one on that object: the
 * host attaches once, at its boundary).
 *
 * @since 0.1.0
 * @category constructors
 */
export const withAtomicFileSystem = (fileSystem: FileSystem.FileSystem, atomic: AtomicFileSystem): AtomicHostFileSystem =>
  Object.assign(fileSystem, { [AtomicFileSystemTypeId]: atomic })
