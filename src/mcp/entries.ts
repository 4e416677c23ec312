/**
 * A directory's entries with what each is, in the order the reference lists them: names from one
 * listing beneath the pinned root, and what each is from a second trip (the subdirectories, or an
 * lstat of every entry where sizes are wanted).
 * Node's `readdir` sorts names by their bytes (libuv's scandir), so the same tree lists the same
 * way here whatever order the file system keeps.
 *
 * @since 0.1.0
 */
import type { PinnedFsError } from "../internal/errors.ts"
import { listing, names, statMany } from "./access.ts"
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

// Below U+D800, UTF-16 code units sort as UTF-8 bytes do; a name with a surrogate pair or a
// character above it is compared by its bytes.
const high = /[\ud800-\uffff]/

const byBytes = (names: ReadonlyArray<string>): Array<string> => {
  if (!names.some((n) => high.test(n))) return [...names].sort()
  return names
    .map((name) => ({ name, bytes: Buffer.from(name) }))
    .sort((a, b) => Buffer.compare(a.bytes, b.bytes))
    .map((e) => e.name)
}

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
 * The entries of the directory `t` names, each a directory or not, from two readings in one trip
 * (the listing, and a glob that tells the subdirectories). When the two do not vouch for each other
 * (the glob did not find the directory, saw a subdirectory change while it ran, or names one the
 * listing does not have), every entry is described by an lstat instead, which refuses a path that
 * changed, as {@link described} does.
 *
 * @since 0.1.0
 */
export const kinds = async (t: Target): Promise<Array<Entry>> => {
  const read = await listing(t)
  const here = new Set(read.names)
  const vouched = read.found && read.consistent && [...read.directories].every((d) => here.has(d))
  if (!vouched) return (await described(t)).map((e) => (e.kind === "directory" ? e : { ...e, kind: "file" }))
  return byBytes(read.names).map((name) => ({ name, kind: read.directories.has(name) ? "directory" : "file", size: 0 }))
}

/**
 * The entries of the directory `t` names, each described by an lstat: its kind (a link told
 * apart), its size. Failures of the listing itself are thrown, and so is the directory changing
 * between the listing and the lstats (its path turned into a link, or out of the root): the names
 * would then be one directory's and the kinds another's.
 *
 * @since 0.1.0
 */
export const described = async (t: Target): Promise<Array<Entry>> => {
  const listed = byBytes(await names(t))
  const stats = await statMany(
    t.root,
    t.verify,
    listed.map((name) => childOf(t, name).rel)
  )
  for (const d of stats) if (!d.ok && wayChanged(d.error)) throw d.error
  return listed.map((name, i): Entry => {
    const d = stats[i]!
    if (!d.ok) return { name, kind: d.error.refusal === "hardlink" ? "hardlinked" : "gone", size: 0 }
    const kind: Kind = d.info.type === "Directory" ? "directory" : d.info.type === "SymbolicLink" ? "link" : "file"
    return { name, kind, size: Number(d.info.size) }
  })
}
