/**
 * What a failed call says: the text the client reads in the tool result. A kernel error keeps the
 * shape Node gives the reference server (`ENOENT: no such file or directory, open '/abs/path'`), so
 * a client that matches on it keeps working. A refusal that is pinnedfs's own starts with the
 * reference's `Access denied - ` and then says what was refused and why; docs/mcp.md lists them.
 *
 * @since 0.1.0
 */
import { getSystemErrorMap } from "node:util"
import { PinnedFsError } from "../internal/errors.ts"

/**
 * A failure whose message is the whole answer the client sees.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolFailure extends Error {
  override readonly name = "ToolFailure"
}

/**
 * Where a failure happened, as the reference's Node call would report it: the system call it
 * names (`open`, `scandir`, `mkdir`, `rename`, `stat`), the absolute path, a rename's destination.
 * `onTheWay` is what the reference names for a component on the way that is not a directory (it
 * meets that in `realpath`, before the operation).
 *
 * @since 0.1.0
 * @category models
 */
export interface Place {
  readonly syscall: string
  readonly abs: string
  readonly dest?: string | undefined
  readonly onTheWay?: string | undefined
}

const messages = new Map<string, string>()
for (const [name, text] of getSystemErrorMap().values()) messages.set(name, text)

/** `syscall 'path'`, and ` -> 'dest'` for a rename, as Node ends its error texts. */
const where = (place: Place): string => `${place.syscall} '${place.abs}'${place.dest === undefined ? "" : ` -> '${place.dest}'`}`

/** Node's error text: `CODE: description, syscall 'path'`. */
export const nodeText = (code: string, place: Place): string => `${code}: ${messages.get(code) ?? code}, ${where(place)}`

/** The text of reading a directory as a file, which Node gives without a path. */
export const readOfDirectory = "EISDIR: illegal operation on a directory, read"

/** The refusal of a path that is or passes through a symbolic link. @since 0.1.0 */
export const symlinkRefusal = (abs: string): string =>
  `Access denied - symbolic link not followed: ${abs} is or passes through a symbolic link (pinnedfs follows no link, not even one whose target is inside the allowed directories)`

const refusalText = (e: PinnedFsError, place: Place): string | undefined => {
  switch (e.refusal) {
    case "symlink":
      return symlinkRefusal(place.abs)
    case "hardlink":
      return `Access denied - file with more than one name: ${place.abs} is hard-linked (pinnedfs refuses such a file: another of its names may lie outside the allowed directories)`
    case "escape":
      return `Access denied - path outside allowed directories: ${place.abs} (pinnedfs: ${e.description || "it is not beneath the pinned directory"})`
    case "identity":
      // The allowed directory's own spelling, checked at the start of the call; else a directory
      // the call held between two steps that something else moved meanwhile.
      if (e.description.startsWith("workspace_identity_changed")) {
        return `Access denied - allowed directory replaced: ${e.path} no longer names the directory pinned when it was allowed (pinnedfs refuses it rather than follow the path elsewhere: ${e.description})`
      }
      return `Access denied - directory changed while in use: ${place.abs} (pinnedfs: ${e.description})`
    case "notregular":
      return `Access denied - not a regular file: ${place.abs} is a FIFO, socket or device (pinnedfs does not open one for reading or writing)`
    case "toolarge":
      return `EFBIG: file too large, ${where(place)} (pinnedfs: ${e.description})`
    case "badargument":
      // The set of allowed directories this call started with was replaced (and closed) meanwhile.
      if (e.code === "EBADF" && e.description === "root is closed") {
        return `Access denied - allowed directory withdrawn: ${place.abs} (the client's roots changed while this call ran)`
      }
      return `EINVAL: invalid argument, ${where(place)} (pinnedfs: ${e.description})`
    case "writezero":
      return `EIO: i/o error, write '${place.abs}' (pinnedfs: ${e.description})`
    case "changed":
      return `EBUSY: resource busy or locked, ${where(place)} (pinnedfs: ${e.description})`
    case "":
      return undefined
  }
}

/**
 * The failure a tool reports for `u`, thrown by an operation at `place`. Anything that is not a
 * pinnedfs error (a bug) passes through unchanged.
 *
 * @since 0.1.0
 * @category errors
 */
export const failureOf = (u: unknown, place: Place): Error => {
  if (u instanceof ToolFailure || !(u instanceof PinnedFsError)) return u instanceof Error ? u : new Error(String(u))
  const refused = refusalText(u, place)
  if (refused !== undefined) return new ToolFailure(refused)
  if (u.code === "ENOTDIR" && place.onTheWay !== undefined) {
    return new ToolFailure(nodeText(u.code, { syscall: place.onTheWay, abs: place.abs }))
  }
  return new ToolFailure(nodeText(u.code, place))
}

/**
 * Runs `f`, reporting a failure as {@link failureOf} does. One `then`, not an async function around
 * an await: the writes pass here on every call.
 *
 * @since 0.1.0
 */
export const at = <A>(place: Place, f: () => Promise<A>): Promise<A> => {
  const report = (u: unknown): never => {
    throw failureOf(u, place)
  }
  try {
    return f().then(undefined, report)
  } catch (u) {
    return Promise.reject(failureOf(u, place))
  }
}
