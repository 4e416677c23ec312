/**
 * `copyFile` and `cp` beneath a pinned root: the argument checks, then one native trip each. What
 * the copy does (and refuses) is the native op's (native/ops/copy.cc, cp.cc; docs/pinnedroot.md).
 *
 * @internal
 */
import { badArgumentPinnedFsError } from "../internal/errors.ts"
import { native } from "../internal/native.ts"
import { relativePath } from "../PinnedRoot.ts"
import type { Runner } from "./runner.ts"

/**
 * `fs.promises.cp` options this `cp` takes. Links are always copied with their text unchanged
 * (Node's `verbatimSymlinks: true`): Node's default rewrites relative text as an absolute path,
 * which would name the host, and is refused here as any link leaving the root is.
 *
 * @since 0.2.0
 * @category models
 */
export interface CpOptions {
  /** Copy a directory's content too. Without it a directory is `EISDIR`, as in Node. */
  readonly recursive?: boolean | undefined
  /** Replace existing files and links (default `true`). */
  readonly force?: boolean | undefined
  /** With `force: false`, an existing destination is `EEXIST` rather than kept. */
  readonly errorOnExist?: boolean | undefined
  /** `fs.constants.COPYFILE_*` for each file copied. */
  readonly mode?: number | undefined
  /** Accepted for Node's sake; the text is always kept as it is (see above). */
  readonly verbatimSymlinks?: boolean | undefined
  /** Only `false`: a link is never followed. */
  readonly dereference?: false | undefined
}

const cpKeys: ReadonlySet<string> = new Set(["recursive", "force", "errorOnExist", "mode", "verbatimSymlinks", "dereference"])

const copyMode = (mode: unknown): number => {
  if (mode === undefined) return 0
  if (typeof mode !== "number" || !Number.isInteger(mode) || mode < 0 || mode > 7) {
    throw badArgumentPinnedFsError(
      "copy mode must be a combination of fs.constants.COPYFILE_EXCL, COPYFILE_FICLONE and COPYFILE_FICLONE_FORCE"
    )
  }
  return mode
}

const flag = (value: unknown, name: string, fallback: boolean): boolean => {
  if (value === undefined) return fallback
  if (typeof value !== "boolean") throw badArgumentPinnedFsError(`cp option '${name}' must be a boolean`)
  return value
}

/** @internal */
export const copyFile = (root: Runner, src: string, dest: string, mode?: number): Promise<void> => {
  const request = { op: native.ops.copyFile, path: relativePath(src, "src"), to: relativePath(dest, "dest"), copyMode: copyMode(mode) }
  return root.run(request, src)
}

/** @internal */
export const cp = (root: Runner, src: string, dest: string, options: CpOptions = {}): Promise<void> => {
  if (typeof options !== "object" || options === null) throw badArgumentPinnedFsError("cp options must be an object")
  for (const key of Object.keys(options)) {
    if (!cpKeys.has(key)) throw badArgumentPinnedFsError(`cp option '${key}' is not supported beneath a pinned root`)
  }
  if (options.dereference !== undefined && options.dereference !== false) {
    throw badArgumentPinnedFsError("cp option 'dereference' must be false: links are never followed")
  }
  flag(options.verbatimSymlinks, "verbatimSymlinks", true)
  const force = flag(options.force, "force", true)
  const request = {
    op: native.ops.cp,
    path: relativePath(src, "src"),
    to: relativePath(dest, "dest"),
    recursive: flag(options.recursive, "recursive", false),
    force,
    errorOnExist: flag(options.errorOnExist, "errorOnExist", false),
    copyMode: copyMode(options.mode)
  }
  return root.run(request, src)
}
