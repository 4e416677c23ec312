/**
 * The file operations the tools use, each one trip to the addon on a located path's pinned root,
 * with the root's spelling re-checked in that same trip (a directory replaced or moved since it
 * was allowed is refused by identity). Every path is resolved beneath the pinned handle with no
 * link followed; a hard-linked file is refused wherever it would be read, written or described.
 *
 * @since 0.1.0
 */
import { fromNative, type PinnedFsError } from "../internal/errors.ts"
import { native } from "../internal/native.ts"
import { fileInfoOf, type StatRecord } from "../internal/statRecord.ts"
import type { FileInfo, PinnedRoot } from "../PinnedRoot.ts"
import type { Target } from "./paths.ts"

const ops = native.ops

// The addon's own path is kept: the root's spelling for an identity refusal, the root-relative path
// otherwise (messages show the located absolute path instead).
const rethrow = (u: unknown): never => {
  throw fromNative(u)
}

// One `then` rather than an async function around an await: every call of every tool passes here.
const settle = <A>(p: Promise<unknown>): Promise<A> => p.then(undefined, rethrow) as Promise<A>

/** The whole file, at most `limit` bytes (default the root's read limit). @since 0.1.0 */
export const readBytes = (t: Target, limit?: number): Promise<Buffer> =>
  settle(t.root.handle.call(ops.readFile, t.rel, false, limit ?? t.root.readLimit, t.verify))

/** lstat semantics: a link is described, a hard-linked file refused. @since 0.1.0 */
export const stat = async (t: Target): Promise<FileInfo> =>
  fileInfoOf(await settle<StatRecord>(t.root.handle.call(ops.stat, t.rel, false, undefined, t.verify)))

/** Whether the path names anything (a trailing link counts). @since 0.1.0 */
export const exists = (t: Target): Promise<boolean> => settle(t.root.handle.call(ops.exists, t.rel, false, undefined, t.verify))

/** The names in a directory, in the file system's order. @since 0.1.0 */
export const names = (t: Target): Promise<Array<string>> => settle(t.root.handle.call(ops.readDirectory, t.rel, false, undefined, t.verify))

/**
 * Two readings of the directory `t` names, one after the other in one trip: its names (a listing),
 * and its subdirectories (a glob) with what that reading can vouch for: `found`, that the glob
 * root itself was found (the `.` branch; a missing root answers nothing, as a root that turned odd
 * mid-lookup may), and `consistent`, that each directory was both typed a directory by the
 * glob's listing (`X`) and entered as one, no-follow (`X/..`); a directory with only one of the two
 * changed while the glob ran. A link is never a directory here. The listing's failure is thrown.
 *
 * @since 0.1.0
 */
export const listing = async (
  t: Target
): Promise<{
  readonly names: Array<string>
  readonly found: boolean
  readonly directories: Set<string>
  readonly consistent: boolean
}> => {
  const [list, glob] = await settle<Array<{ ok: boolean; value?: unknown; error?: unknown }>>(
    t.root.handle.batch(
      [
        { op: ops.readDirectory, path: t.rel },
        { op: ops.glob, path: "", to: t.rel, pattern: "{.,*/,*/..}", exclude: [], dot: true }
      ],
      { size: 2, response: 0 },
      t.verify
    )
  )
  if (!list!.ok) throw fromNative(list!.error)
  const typed = new Set<string>()
  const entered = new Set<string>()
  let found = false
  for (const m of glob!.ok ? (glob!.value as Array<string>) : []) {
    if (m === ".") found = true
    else if (m.endsWith("/..")) entered.add(m.slice(0, -3))
    else typed.add(m)
  }
  const consistent = typed.size === entered.size && [...typed].every((d) => entered.has(d))
  return { names: list!.value as Array<string>, found, directories: typed, consistent }
}

/** One member of {@link statMany}: what it is, or why not. @since 0.1.0 @category models */
export type Described = { readonly ok: true; readonly info: FileInfo } | { readonly ok: false; readonly error: PinnedFsError }

/**
 * lstat of many root-relative paths of one root in one trip, each failing alone. Bounded by the
 * addon's batch limit (2^20 members), far above a directory the listing limit lets through.
 *
 * @since 0.1.0
 */
export const statMany = async (root: PinnedRoot, verify: true | string, paths: ReadonlyArray<string>): Promise<Array<Described>> => {
  if (paths.length === 0) return []
  const codes = new Uint8Array(paths.length).fill(ops.stat)
  const [failed, values] = await settle<[Uint8Array, Array<unknown>]>(
    root.handle.readMany(codes, paths, new Uint8Array(paths.length), paths.length, 0, verify, root.readLimit)
  )
  return values.map((v, i) =>
    failed[i] === 1 ? { ok: false, error: fromNative(v, paths[i]) } : { ok: true, info: fileInfoOf(v as StatRecord) }
  )
}

/** One member of {@link readMany}: the bytes, or why not. @since 0.1.0 @category models */
export type Read = { readonly ok: true; readonly bytes: Buffer } | { readonly ok: false; readonly error: PinnedFsError }

/**
 * Many whole files of one root in one trip, each failing alone; all contents together at most
 * `response` bytes (a member that would pass it fails, unread), each at most the root's read limit.
 *
 * @since 0.1.0
 */
export const readMany = async (
  root: PinnedRoot,
  verify: true | string,
  paths: ReadonlyArray<string>,
  response: number
): Promise<Array<Read>> => {
  if (paths.length === 0) return []
  const codes = new Uint8Array(paths.length).fill(ops.readFile)
  const [failed, values] = await settle<[Uint8Array, Array<unknown>]>(
    root.handle.readMany(codes, paths, new Uint8Array(paths.length), paths.length, response, verify, root.readLimit)
  )
  return values.map((v, i) => {
    if (failed[i] === 1) return { ok: false, error: fromNative(v, paths[i]) }
    const bytes = v as Uint8Array
    return { ok: true, bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) }
  })
}

/**
 * One file's content with its lstat taken just before and just after the read, in one trip: when
 * the two agree (device, inode, size, change times), the content is that one version of the file.
 * The first failure (a link, a hard link, a directory, a missing file) is thrown.
 *
 * @since 0.1.0
 */
export const readBetweenStats = async (
  t: Target
): Promise<{ readonly before: FileInfo; readonly bytes: Buffer; readonly after: FileInfo }> => {
  const codes = Uint8Array.of(ops.stat, ops.readFile, ops.stat)
  const paths = [t.rel, t.rel, t.rel]
  const [failed, values] = await settle<[Uint8Array, Array<unknown>]>(
    t.root.handle.readMany(codes, paths, new Uint8Array(3), 3, t.root.readLimit, t.verify, t.root.readLimit)
  )
  for (let i = 0; i < 3; i++) if (failed[i] === 1) throw fromNative(values[i])
  const bytes = values[1] as Uint8Array
  return {
    before: fileInfoOf(values[0] as StatRecord),
    bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    after: fileInfoOf(values[2] as StatRecord)
  }
}

/**
 * Replaces or creates the file with `text` (UTF-8) atomically: a temporary file beside it, renamed
 * over it, so readers and a killed server see the old content or the new, whole. `sync` adds the
 * fsyncs that make it survive a power loss too. A link or hard-linked file there is refused.
 *
 * @since 0.1.0
 */
export const writeText = (t: Target, text: string, sync: boolean): Promise<void> =>
  settle(
    t.root.handle.execute(
      // One shape whether or not it syncs (no spread): the addon reads `durable` as a boolean.
      { op: ops.writeFile, path: t.rel, data: text, flag: native.flags.w, atomic: true, durable: sync },
      t.verify
    )
  )

/**
 * Replaces the file with `text` (UTF-8) only while it is the file `identity` names (`"dev:ino"`) and
 * holds exactly `expected`, the bytes the caller read: compare-and-swap (native/ops/unchanged.cc).
 * The replacement is published as {@link writeText}'s is, keeping the file's permission bits; a file
 * that changed is left as it is and the call fails with the `changed` refusal.
 *
 * @since 0.1.0
 */
export const replaceTextIfUnchanged = (t: Target, text: string, expected: Uint8Array, identity: string, sync: boolean): Promise<void> =>
  settle(
    t.root.handle.execute({ op: ops.replaceIfUnchanged, path: t.rel, data: text, expect: expected, identity, durable: sync }, t.verify)
  )

/** `mkdir -p`, each level created through its pinned parent. @since 0.1.0 */
export const makeDirectories = (t: Target): Promise<void> =>
  settle(t.root.handle.execute({ op: ops.makeDirectory, path: t.rel, recursive: true }, t.verify))

/**
 * Renames `from` to `to` (both relative to `root`) with RENAME_NOREPLACE: an existing destination
 * is refused by the rename itself.
 *
 * @since 0.1.0
 */
export const renameNoReplace = (root: PinnedRoot, verify: true | string, from: string, to: string): Promise<void> =>
  settle(root.handle.execute({ op: ops.rename, path: from, to, noReplace: true }, verify))
