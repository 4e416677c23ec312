/**
 * The wire contract between a permission kernel and an atomic host extension: the symbol the
 * extension is found under, the request each operation sends, and the result each answers. These
 * names and shapes are fixed by the kernel that calls us; they are spelled here exactly, and
 * nothing else in pinnedfs decides them.
 *
 * Every request carries the pinned-root triple: `boundaryRoot` (canonical path), `logicalRoot` (the
 * workspace as the caller spells it) and `rootIdentity` (`"dev:ino"`). Paths are absolute, inside
 * one of the two roots.
 *
 * @since 0.1.0
 */
import type { Effect, FileSystem, PlatformError, Result } from "effect"

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
 * The pinned root a request is resolved against. A kernel fills these in at its boundary.
 *
 * @since 0.1.0
 * @category models
 */
export interface AtomicRoot {
  readonly boundaryRoot?: string | undefined
  readonly logicalRoot?: string | undefined
  readonly rootIdentity?: string | undefined
}

/** @since 0.1.0 @category models */
export type WriteOptions =
  | { readonly flag?: FileSystem.OpenFlag | undefined; readonly mode?: number | undefined }
  | undefined

/**
 * One operation, discriminated by `operation`, each member carrying exactly its own operands.
 *
 * @since 0.1.0
 * @category models
 */
export type AtomicRequest =
  | (AtomicRoot & { readonly operation: "exists"; readonly path: string })
  | (AtomicRoot & { readonly operation: "chmod"; readonly path: string; readonly options: { readonly mode: number } })
  | (AtomicRoot & {
    readonly operation: "chown"
    readonly path: string
    readonly options: { readonly uid: number; readonly gid: number }
  })
  | (AtomicRoot & {
    readonly operation: "glob"
    readonly pattern: string
    readonly root: string
    readonly options?: { readonly exclude?: ReadonlyArray<string> | undefined } | undefined
  })
  | (AtomicRoot & {
    readonly operation: "makeDirectory"
    readonly path: string
    readonly options?: { readonly recursive?: boolean | undefined; readonly mode?: number | undefined } | undefined
  })
  | (AtomicRoot & {
    readonly operation: "readDirectory"
    readonly path: string
    readonly options?: { readonly recursive?: boolean | undefined } | undefined
  })
  | (AtomicRoot & { readonly operation: "readFile"; readonly path: string })
  | (AtomicRoot & { readonly operation: "readFileString"; readonly path: string; readonly encoding?: string | undefined })
  | (AtomicRoot & { readonly operation: "readLink"; readonly path: string })
  | (AtomicRoot & { readonly operation: "realPath"; readonly path: string })
  | (AtomicRoot & { readonly operation: "resolve"; readonly path: string })
  | (AtomicRoot & {
    readonly operation: "remove"
    readonly path: string
    readonly options?: { readonly recursive?: boolean | undefined; readonly force?: boolean | undefined } | undefined
  })
  | (AtomicRoot & { readonly operation: "rename"; readonly from: string; readonly to: string })
  | (AtomicRoot & { readonly operation: "stat"; readonly path: string })
  | (AtomicRoot & {
    readonly operation: "writeFile"
    readonly path: string
    /** Base64 of the bytes, at most the extension's `contentLimit` bytes once decoded. */
    readonly data: string
    readonly options?: WriteOptions
  })
  | (AtomicRoot & {
    readonly operation: "writeFileString"
    readonly path: string
    readonly data: string
    readonly options?: WriteOptions
  })
  | (AtomicRoot & { readonly operation: "batch"; readonly requests: ReadonlyArray<AtomicBatchRequest> })

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
  /** Exact `"dev:ino"` of a directory, from 64-bit values (never a JS number). */
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
export const withAtomicFileSystem = (
  fileSystem: FileSystem.FileSystem,
  atomic: AtomicFileSystem
): AtomicHostFileSystem => Object.assign(fileSystem, { [AtomicFileSystemTypeId]: atomic })
