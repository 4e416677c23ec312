/**
 * `pinnedfs/effect`: the atomic host extension for Effect v4 permission kernels, over the native
 * addon. `NodeAtomicFileSystem.layer` provides `FileSystem.FileSystem` with the extension attached.
 *
 * @since 0.1.0
 */

/**
 * The extension over the native addon, and the layers that attach it.
 *
 * @since 0.1.0
 */
export * as NodeAtomicFileSystem from "./NodeAtomicFileSystem.ts"

export * from "../protocol/wire.ts"

export type {
  ExtensionRequest,
  ExtensionResults,
  GlobBatchRequest,
  MkdirsRequest,
  MkdirsResult,
  OwnedDirectory,
  PinnedAtomicFileSystem,
  PinnedRequest,
  PinnedResult,
  PinnedResults,
  PlannedDirectory,
  RmdirsRequest,
  RmdirsResult,
  OpenFileRequest
} from "../protocol/extensions.ts"
