/**
 * Faults of the kernel's composition rather than of one permission.
 *
 * @since 0.1.0
 */
import { Data } from "effect"

/**
 * Why the kernel refused something no grant could allow. `workspace_identity_changed`: the
 * workspace root no longer names the directory pinned at composition (the `cause` of a `Busy`
 * `PlatformError`).
 *
 * @since 0.1.0
 * @category errors
 */
export class FileSystemFault extends Data.TaggedError("FileSystemFault")<{
  readonly code: "workspace_identity_changed"
  readonly message: string
}> {}
