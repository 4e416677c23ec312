/**
 * Compare-and-swap on one file beneath a pinned root (native/ops/unchanged.cc): replace it, or
 * remove it, only while it is what the caller expects, its content and/or its `dev:ino`. A file
 * that changed since the caller read it is left as it is, and the call fails with the `changed`
 * refusal (`Busy`); a write that lands during the act itself is caught by a second check after
 * the rename and undone. docs/dev.md, "Compare-and-swap", says what window remains.
 *
 * @internal
 */
import { badArgumentPinnedFsError } from "../internal/errors.ts"
import { native, type NativeRequest } from "../internal/native.ts"
import { relativePath } from "../PinnedRoot.ts"
import type { Runner } from "./runner.ts"

/**
 * What the file is expected to be: `expect`, the content it holds (bytes, or a string as UTF-8),
 * and/or `identity`, its `"dev:ino"` (as `PinnedRoot.identify` and `stat`'s `dev` and `ino` give
 * it). At least one. With an identity alone, "unchanged" means the same inode, size and
 * modification time, which a write within the file system's timestamp granularity can pass: give
 * the content where it is known.
 *
 * @since 0.1.0
 * @category models
 */
export interface Expectation {
  readonly expect?: Uint8Array | string | undefined
  readonly identity?: string | undefined
}

/** @since 0.1.0 @category models */
export interface ReplaceIfUnchangedOptions extends Expectation {
  /** Permission bits of the replacement; default the replaced file's. */
  readonly mode?: number | undefined
  /** fsync the new content before it is published, and the directory after. */
  readonly durable?: boolean | undefined
}

const expectation = (options: Expectation | undefined): Pick<NativeRequest, "expect" | "identity"> => {
  if (typeof options !== "object" || options === null) {
    throw badArgumentPinnedFsError('a compare-and-swap needs its expectation: { expect } (the content) and/or { identity } ("dev:ino")')
  }
  const { expect, identity } = options
  if (expect !== undefined && typeof expect !== "string" && !(expect instanceof Uint8Array)) {
    throw badArgumentPinnedFsError("expect must be a string or a Uint8Array")
  }
  if (identity !== undefined && (typeof identity !== "string" || !/^\d+:\d+$/.test(identity))) {
    throw badArgumentPinnedFsError('identity must be "dev:ino" in decimal')
  }
  if (expect === undefined && identity === undefined) {
    throw badArgumentPinnedFsError('a compare-and-swap needs its expectation: { expect } (the content) and/or { identity } ("dev:ino")')
  }
  return { ...(expect === undefined ? {} : { expect }), ...(identity === undefined ? {} : { identity }) }
}

/** @internal */
export const replaceIfUnchanged = (
  root: Runner,
  path: string,
  data: Uint8Array | string,
  options: ReplaceIfUnchangedOptions
): Promise<void> => {
  if (typeof data !== "string" && !(data instanceof Uint8Array))
    throw badArgumentPinnedFsError("data must be a string or a Uint8Array", path)
  const mode = options?.mode
  if (mode !== undefined && (typeof mode !== "number" || !Number.isInteger(mode) || mode < 0 || mode > 0o7777)) {
    throw badArgumentPinnedFsError("mode must be a permission mode (0 to 0o7777)", path)
  }
  const request: NativeRequest = {
    op: native.ops.replaceIfUnchanged,
    path: relativePath(path),
    data,
    durable: options?.durable === true,
    ...expectation(options),
    ...(mode === undefined ? {} : { mode })
  }
  return root.run(request, path)
}

/** @internal */
export const removeIfUnchanged = (root: Runner, path: string, options: Expectation): Promise<void> =>
  root.run({ op: native.ops.removeIfUnchanged, path: relativePath(path), ...expectation(options) }, path)
