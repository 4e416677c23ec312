/**
 * `pinnedfs/kernel`: a permission kernel for Effect 4's `FileSystem`, over the atomic host
 * extension (`NodeAtomicFileSystem`, or the path-based `PathAtomicFileSystem` fallback).
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as FileSystemBatch from "./FileSystemBatch.ts"

/** @since 0.1.0 */
export * as GrantStore from "./GrantStore.ts"

/** @since 0.1.0 */
export * as KernelFileSystem from "./KernelFileSystem.ts"

/** @since 0.1.0 */
export * as Permission from "./Permission.ts"

/** @since 0.1.0 */
export * as Workspace from "./Workspace.ts"

/** @since 0.1.0 */
export { FileSystemFault } from "./Fault.ts"
