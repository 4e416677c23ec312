/**
 * The tools that change files: `write_file`, `edit_file`, `create_directory`, `move_file`. Every
 * file is published atomically (a temporary file beside it, renamed over it), nothing is written
 * through a link or to a hard-linked file, and a move never replaces what is at its destination.
 *
 * @since 0.1.0
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import type { FileInfo, PinnedRoot } from "../PinnedRoot.ts"
import { makeDirectories, readBetweenStats, renameNoReplace, replaceTextIfUnchanged, stat, writeText } from "./access.ts"
import type { Spelling } from "./allowed.ts"
import { type Context, target } from "./context.ts"
import { applyEdits, type Edit, fencedDiff } from "./edits.ts"
import { at, failureOf, ToolFailure } from "./failures.ts"
import { textResult } from "./format.ts"
import { normalizeLineEndings } from "./lines.ts"
import type { Target } from "./paths.ts"
import { readFailure } from "./reads.ts"

const writePlace = (t: Target) => ({ syscall: "open", abs: t.abs, onTheWay: "realpath" })

/** @since 0.1.0 */
export const writeFile = async (ctx: Context, args: { readonly path: string; readonly content: string }): Promise<CallToolResult> => {
  const t = await target(ctx, args.path)
  await at(writePlace(t), () => writeText(t, args.content, ctx.sync))
  return textResult(`Successfully wrote to ${args.path}`)
}

const sameFile = (a: FileInfo, b: FileInfo): boolean =>
  a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs

/**
 * The file's bytes with the identity (device, inode, size, change times) it had on both sides of
 * the read, in one trip: stat, read, stat. When the two stats differ the file changed while it was
 * read, and the content belongs to no one version of it.
 */
const readHeld = async (t: Target): Promise<{ readonly bytes: Buffer; readonly held: FileInfo }> => {
  let read: Awaited<ReturnType<typeof readBetweenStats>>
  try {
    read = await readBetweenStats(t)
  } catch (u) {
    throw readFailure(u, t)
  }
  if (!sameFile(read.before, read.after)) throw changedWhileEditing(t)
  return { bytes: read.bytes, held: read.after }
}

const changedWhileEditing = (t: Target): ToolFailure =>
  new ToolFailure(
    `EBUSY: resource busy or locked, open '${t.abs}' (pinnedfs: the file changed while it was being edited; nothing was written, read it again and retry)`
  )

/**
 * Read, edit, publish, as compare-and-swap: the edits apply to one version of the file, and the
 * result replaces that version only. The publish is one native call that holds the file, checks it
 * is the inode read and still holds the bytes read, exchanges the complete replacement with it and
 * checks again (a write landing in between is undone); a file that changed is left as the other
 * writer left it. The reference reads, then renames over whatever is there by then.
 *
 * @since 0.1.0
 */
export const editFile = async (
  ctx: Context,
  args: { readonly path: string; readonly edits: ReadonlyArray<Edit>; readonly dryRun: boolean }
): Promise<CallToolResult> => {
  const t = await target(ctx, args.path)
  const { bytes, held } = await readHeld(t)
  const content = normalizeLineEndings(bytes.toString("utf8"))
  const modified = applyEdits(content, args.edits)
  const diff = fencedDiff(t.abs, content, modified)
  if (!args.dryRun) {
    await replaceTextIfUnchanged(t, modified, bytes, `${held.dev}:${held.ino}`, ctx.sync).catch((u: unknown) => {
      throw (u as { refusal?: unknown }).refusal === "changed" ? changedWhileEditing(t) : failureOf(u, writePlace(t))
    })
  }
  return textResult(diff)
}

/** @since 0.1.0 */
export const createDirectory = async (ctx: Context, args: { readonly path: string }): Promise<CallToolResult> => {
  const t = await target(ctx, args.path)
  await at({ syscall: "mkdir", abs: t.abs, onTheWay: "realpath" }, () => makeDirectories(t))
  return textResult(`Successfully created directory ${args.path}`)
}

/** `abs` relative to the directory pinned at `base`, when it lies there. */
const relativeTo = (base: string, abs: string): string | undefined => {
  if (abs === base) return ""
  const prefix = base === "/" ? "/" : `${base}/`
  return abs.startsWith(prefix) ? abs.slice(prefix.length) : undefined
}

/**
 * Both ends resolved beneath one pinned root: the one they share, else the innermost allowed
 * directory that holds both (nested allowed directories). Two unrelated allowed directories have no
 * handle in common that a rename could go through.
 */
const commonRoot = (
  allowed: ReadonlyArray<Spelling>,
  s: Target,
  d: Target
): { readonly root: PinnedRoot; readonly verify: true | string; readonly from: string; readonly to: string } | undefined => {
  if (s.root === d.root) return { root: s.root, verify: s.verify, from: s.rel, to: d.rel }
  let best: { root: PinnedRoot; verify: true | string; from: string; to: string } | undefined
  for (const spelling of allowed) {
    const from = relativeTo(spelling.root.path, s.abs)
    const to = relativeTo(spelling.root.path, d.abs)
    if (from === undefined || to === undefined) continue
    if (best === undefined || spelling.root.path.length > best.root.path.length) best = { root: spelling.root, verify: true, from, to }
  }
  return best
}

/**
 * Renames with RENAME_NOREPLACE: an existing destination, whatever it is, is refused by the rename
 * itself, with the reference's text. The reference checks with lstat and then renames, which
 * replaces a destination created in between.
 *
 * @since 0.1.0
 */
export const moveFile = async (ctx: Context, args: { readonly source: string; readonly destination: string }): Promise<CallToolResult> => {
  const s = await target(ctx, args.source)
  const d = await target(ctx, args.destination)
  const place = { syscall: "rename", abs: s.abs, dest: d.abs, onTheWay: "realpath" }
  const common = commonRoot(ctx.allowed().spellings, s, d)
  if (common === undefined) {
    throw new ToolFailure(
      `EXDEV: cross-device link not permitted, rename '${s.abs}' -> '${d.abs}' (pinnedfs moves within one allowed directory: these two are pinned separately and no handle holds both)`
    )
  }
  // Each end's own allowed directory is checked too when the rename goes through another handle
  // (nested directories) or another spelling (a link to the root): replaced, it is refused.
  for (const end of [s, d]) {
    if (end.root !== common.root || end.verify !== common.verify) await at(place, () => stat({ ...end, rel: "" }))
  }
  try {
    await renameNoReplace(common.root, common.verify, common.from, common.to)
  } catch (u) {
    const e = failureOf(u, place)
    if ((u as { code?: unknown; refusal?: unknown }).code === "EEXIST" && (u as { refusal?: unknown }).refusal === "") {
      throw new ToolFailure(`Destination already exists: ${d.abs}`)
    }
    throw e
  }
  return textResult(`Successfully moved ${args.source} to ${args.destination}`)
}
