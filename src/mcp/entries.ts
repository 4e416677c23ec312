/**
 * A directory's entries with what each is, in the order the reference lists them: names from one
 * listing beneath the pinned root, each described by an lstat of the same root in one more trip.
 * Node's `readdir` sorts names by their bytes (libuv's scandir), so the same tree lists the same
 * way here whatever order the file system keeps.
 *
 * @since 0.1.0
 */
import type { PinnedFsError } from "../internal/errors.ts"
import { names, statMany } from "./access.ts"
import type { Target } from "./paths.ts"

/**
 * What an entry is. `hardlinked`: a file with more than one name, which pinnedfs does not describe
 * (its size or times may be an outside file's); `gone`: not there any more by the time it was
 * described.
 *
 * @since 0.1.0
 * @category models
 */
export type Kind = "directory" | "file" | "link" | "hardlinked" | "gone"

/** @since 0.1.0 @category models */
export interface Entry {
  readonly name: string
  readonly kind: Kind
  /** lstat size; 0 for what was not described. */
  readonly size: number
}

const byBytes = (names: ReadonlyArray<string>): Array<string> =>
  names
    .map((name) => ({ name, bytes: Buffer.from(name) }))
    .sort((a, b) => Buffer.compare(a.bytes, b.bytes))
    .map((e) => e.name)

/** `t`'s path joined with a name: the entry as a target of its own. @since 0.1.0 */
export const childOf = (t: Target, name: string): Target => ({
  ...t,
  rel: t.rel === "" ? name : `${t.rel}/${name}`,
  abs: t.abs === "/" ? `/${name}` : `${t.abs}/${name}`
})

/**
 * Whether an entry's lstat failed because the directory's own path changed between the listing and
 * the lstat (a link or a non-directory on the way now, or the path gone out of the root): the
 * entry itself, being the last component, is described and never followed, so only the way to it
 * can fail like this.
 */
const wayChanged = (e: PinnedFsError): boolean =>
  e.refusal === "symlink" || e.refusal === "escape" || e.refusal === "identity" || (e.refusal === "" && e.code === "ENOTDIR")

/**
 * The entries of the directory `t` names. Failures of the listing itself are thrown, and so is the
 * directory changing under the two trips (its path turned into a link, or out of the root): the
 * names would then be one directory's and the kinds another's.
 *
 * @since 0.1.0
 */
export const entries = async (t: Target): Promise<Array<Entry>> => {
  const listed = byBytes(await names(t))
  const described = await statMany(
    t.root,
    t.verify,
    listed.map((name) => childOf(t, name).rel)
  )
  for (const d of described) if (!d.ok && wayChanged(d.error)) throw d.error
  return listed.map((name, i): Entry => {
    const d = described[i]!
    if (!d.ok) return { name, kind: d.error.refusal === "hardlink" ? "hardlinked" : "gone", size: 0 }
    const kind: Kind = d.info.type === "Directory" ? "directory" : d.info.type === "SymbolicLink" ? "link" : "file"
    return { name, kind, size: Number(d.info.size) }
  })
}
