/**
 * pinnedfs: file operations confined to a pinned root directory.
 *
 * @since 0.1.0
 */
export {
  type BatchRequest,
  type BatchResult,
  type FileInfo,
  type FileType,
  type GlobListing,
  type MkdirsResult,
  type OpenFlag,
  type OpenOptions,
  type OwnedDirectory,
  PinnedRoot,
  type PlannedDirectory,
  type ReadOptions,
  type Resolution,
  type RmdirsResult,
  type Strategy,
  type UnnamedEntry,
  type WriteOptions
} from "./PinnedRoot.ts"
export { type ContentBudget, contentBudget, defaultContentBudget } from "./budget.ts"
export { type HandleFlag, type HandleReadFileOptions, PinnedFileHandle } from "./root/handle.ts"
export type { ReadStreamOptions, WriteStreamOptions } from "./root/streams.ts"
export { PinnedFsError, type ReasonTag, reasonOf, type Refusal } from "./internal/errors.ts"
export { AbortError } from "./root/abort.ts"
export { BigIntStats, Stats } from "./root/stats.ts"
export type { Expectation, ReplaceIfUnchangedOptions } from "./root/unchanged.ts"
export type { CpOptions } from "./root/copy.ts"
