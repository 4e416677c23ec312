/**
 * Whole-file writes of the path-based executor (`w`, `w+`, `wx`, `wx+`), made the way the native
 * executor makes them, so both keep one contract: the new content goes to a temporary file beside
 * the target and is renamed over it (`wx`: linked, which never replaces a name), keeping the old
 * file's mode and owner, so a process killed mid-write or a full disk leaves the old content or the
 * new, never a prefix. Where the directory takes no new file from the caller, or the owner cannot
 * be kept, the file is written in place instead, as the native executor does.
 *
 * Node has no anonymous temporary (`O_TMPFILE` with a linkat that follows `/proc/self/fd`), so this
 * temporary has its name from the start: a process killed while writing it leaves it beside the
 * intact target (`.pinnedfs-<hex>.tmp`), as the native executor's named path does on macOS.
 *
 * @internal
 */
import { randomBytes } from "node:crypto"
import type { BigIntStats } from "node:fs"
import { constants } from "node:fs"
import * as fsp from "node:fs/promises"
import * as nodePath from "node:path"

/** How a replacement ended: done, or handed back to be written in place. @internal */
export type Replaced = "done" | "in place"

const isCode = (e: unknown, ...codes: ReadonlyArray<string>): boolean =>
  typeof e === "object" && e !== null && codes.includes((e as NodeJS.ErrnoException).code ?? "")

/**
 * Replaces `target` (already checked: a regular file with one link, or absent) with `data`.
 * `existing` is its `lstat` when there was one. `durable` fsyncs the data before the rename and the
 * directory after (skipped where the directory cannot be opened for reading: Node has no syncfs).
 *
 * @internal
 */
export const replace = async (
  target: string,
  data: Uint8Array,
  options: { readonly exclusive: boolean; readonly mode: number | undefined; readonly durable: boolean },
  existing: BigIntStats | undefined
): Promise<Replaced> => {
  if (existing !== undefined) {
    // Node opens the file for writing: a file the caller may not write is EACCES, whatever the
    // directory would allow a rename to do.
    await fsp.access(target, constants.W_OK)
  }
  const keep = existing === undefined ? undefined : Number(existing.mode & 0o7777n)
  const temp = nodePath.join(nodePath.dirname(target), `.pinnedfs-${randomBytes(8).toString("hex")}.tmp`)
  let handle: fsp.FileHandle
  try {
    handle = await fsp.open(temp, "wx", keep === undefined ? (options.mode ?? 0o666) : keep & 0o777)
  } catch (e) {
    if (existing !== undefined && !options.exclusive && isCode(e, "EACCES", "EPERM")) return "in place"
    throw e
  }
  let published = false
  try {
    const handed = await writeTemp(handle, data, existing, keep, options)
    if (handed === "in place") return "in place"
    if (options.exclusive) {
      await fsp.link(temp, target)
    } else {
      await fsp.rename(temp, target)
      published = true
    }
    if (options.durable) await syncDirectory(nodePath.dirname(target))
    return "done"
  } finally {
    await handle.close().catch(() => undefined)
    if (!published) await fsp.unlink(temp).catch(() => undefined)
  }
}

/** The temporary's owner, content and bits, or "in place" when the owner cannot be kept. */
const writeTemp = async (
  handle: fsp.FileHandle,
  data: Uint8Array,
  existing: BigIntStats | undefined,
  keep: number | undefined,
  options: { readonly durable: boolean }
): Promise<Replaced> => {
  let chmod = false
  if (existing !== undefined && keep !== undefined) {
    const made = await handle.stat({ bigint: true })
    if (made.uid !== existing.uid || made.gid !== existing.gid) {
      const failed = await handle.chown(Number(existing.uid), Number(existing.gid)).then(
        () => undefined,
        (e: unknown) => e
      )
      if (failed !== undefined) {
        // An unprivileged caller cannot give a file away: a replacement would be ours, not its owner's.
        if (isCode(failed, "EPERM")) return "in place"
        throw failed
      }
      chmod = true
    }
    chmod ||= Number(made.mode & 0o7777n) !== keep
  }
  await handle.writeFile(data)
  // After the data: fchown clears set-id bits, and so does an unprivileged write.
  if (chmod && keep !== undefined) await handle.chmod(keep)
  if (options.durable) await handle.sync()
  return "done"
}

const syncDirectory = async (dir: string): Promise<void> => {
  const handle = await fsp.open(dir, "r").catch((e: unknown) => {
    if (isCode(e, "EACCES")) return undefined
    throw e
  })
  if (handle === undefined) return
  try {
    await handle.sync().catch((e: unknown) => {
      if (!isCode(e, "EINVAL")) throw e
    })
  } finally {
    await handle.close()
  }
}
