/**
 * The read tools: `read_text_file` (and its deprecated alias `read_file`) with `head`/`tail`,
 * `read_media_file`, `read_multiple_files`. Each file is read whole in one trip, bounded by the
 * root's read limit, never through a link and never when hard-linked.
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { PinnedFsError } from "../internal/errors.ts"
import type { PinnedRoot } from "../PinnedRoot.ts"
import { readBytes, readMany } from "./access.ts"
import { type Context, target } from "./context.ts"
import { failureOf, readOfDirectory, ToolFailure } from "./failures.ts"
import { textResult } from "./format.ts"
import { head, tail } from "./lines.ts"
import type { Target } from "./paths.ts"

/** A read's failure as the reference's `fs.readFile` reports it: `open`, a directory without a path. @since 0.1.0 */
export const readFailure = (u: unknown, t: Target, syscall = "open"): Error => {
  if (u instanceof PinnedFsError && u.refusal === "" && u.code === "EISDIR") return new ToolFailure(readOfDirectory)
  return failureOf(u, { syscall, abs: t.abs, onTheWay: "realpath" })
}

/** The whole file, failing as the reference's read does. @since 0.1.0 */
export const readAt = (t: Target, syscall = "open"): Promise<Buffer> =>
  readBytes(t).then(undefined, (u: unknown) => {
    throw readFailure(u, t, syscall)
  })

/** @since 0.1.0 */
export const readTextFile = async (
  ctx: Context,
  args: { readonly path: string; readonly head?: number | undefined; readonly tail?: number | undefined }
): Promise<CallToolResult> => {
  const t = await target(ctx, args.path)
  if (args.head && args.tail) throw new ToolFailure("Cannot specify both head and tail parameters simultaneously")
  // The reference stats before a tail, so a missing file is reported by `stat` there.
  const bytes = await readAt(t, args.tail ? "stat" : "open")
  const content = args.tail ? tail(bytes, args.tail) : args.head ? head(bytes.toString("utf8"), args.head) : bytes.toString("utf8")
  return textResult(content)
}

const mimeTypes: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".bmp": "image/bmp",
  ".svg": "image/svg+xml",
  ".mp3": "audio/mpeg",
  ".wav": "audio/wav",
  ".ogg": "audio/ogg",
  ".flac": "audio/flac"
}

/** @since 0.1.0 */
export const readMediaFile = async (ctx: Context, args: { readonly path: string }): Promise<CallToolResult> => {
  const t = await target(ctx, args.path)
  const mimeType = mimeTypes[path.extname(t.abs).toLowerCase()] ?? "application/octet-stream"
  const data = (await readAt(t)).toString("base64")
  const item = mimeType.startsWith("image/")
    ? { type: "image" as const, data, mimeType }
    : mimeType.startsWith("audio/")
      ? { type: "audio" as const, data, mimeType }
      : { type: "resource" as const, resource: { uri: pathToFileURL(t.abs).href, mimeType, blob: data } }
  return { content: [item], structuredContent: { content: [item] } }
}

/**
 * Every file read, each failing alone with its own message. The files of one root are read in one
 * trip; together all contents are bounded by the first root's read limit (a file that would take
 * the answer past it fails alone, unread, as a file over the limit does).
 *
 * @since 0.1.0
 */
export const readMultipleFiles = async (ctx: Context, args: { readonly paths: ReadonlyArray<string> }): Promise<CallToolResult> => {
  const located = await Promise.all(
    args.paths.map((p) =>
      (async () => target(ctx, p))().then(
        (t) => ({ t }),
        (e: unknown) => ({ e })
      )
    )
  )
  const texts: Array<string> = new Array(args.paths.length)
  const groups = new Map<PinnedRoot, Map<true | string, Array<number>>>()
  located.forEach((l, i) => {
    if ("e" in l) {
      texts[i] = `${args.paths[i]}: Error - ${messageOf(l.e)}`
      return
    }
    const byVerify = groups.get(l.t.root) ?? new Map<true | string, Array<number>>()
    groups.set(l.t.root, byVerify)
    const members = byVerify.get(l.t.verify) ?? []
    byVerify.set(l.t.verify, members)
    members.push(i)
  })
  let budget = ctx.allowed().spellings[0]?.root.readLimit ?? 0
  for (const [root, byVerify] of groups) {
    for (const [verify, members] of byVerify) {
      const targets = members.map((i) => (located[i] as { t: Target }).t)
      const reads = await readMany(
        root,
        verify,
        targets.map((t) => t.rel),
        budget
      ).catch((u: unknown) => targets.map(() => ({ ok: false as const, error: u })))
      reads.forEach((r, k) => {
        const i = members[k]!
        if (r.ok) {
          budget -= r.bytes.length
          texts[i] = `${args.paths[i]}:\n${r.bytes.toString("utf8")}\n`
        } else {
          texts[i] = `${args.paths[i]}: Error - ${messageOf(readFailure(r.error, targets[k]!))}`
        }
      })
    }
  }
  return textResult(texts.join("\n---\n"))
}

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e))
