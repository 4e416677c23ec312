/**
 * Faults of the kernel's composition rather than of one permission.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * Why a composition or a guarded batch refused: `executor_already_present` (an isolation
 * attestation over a file system that already carries an executor), `isolated_operation_unsupported`
 * (an attested volume reached an operation it never advertises), `workspace_identity_changed` (the
 * workspace root no longer names the directory pinned at composition).
 *
 * @since 0.1.0
 * @category models
 */
export const FileSystemFaultCode = Schema.Literals([
  "executor_already_present",
  "isolated_operation_unsupported",
  "workspace_identity_changed"
])

/**
 * The stable code of a {@link FileSystemFault}.
 *
 * @since 0.1.0
 * @category models
 */
export type FileSystemFaultCode = typeof FileSystemFaultCode.Type

/**
 * A broken composition, or a workspace whose identity changed. Tagged as the client's kernel tags
 * it, so code that matches the client's fault matches this one. `withIsolatedFileSystem` throws it
 * (`executor_already_present`); an attested volume reaching an operation it never advertises dies
 * with it (`isolated_operation_unsupported`); a batch whose root was replaced fails as `Busy` with it
 * as the `cause` (`workspace_identity_changed`).
 *
 * @since 0.1.0
 * @category errors
 */
export class FileSystemFault extends Schema.TaggedError<FileSystemFault>()("@smthrs/kernel/FileSystemFault", {
  code: FileSystemFaultCode,
  message: Schema.String
}) {
  override readonly name = "FileSystemFault"
}
