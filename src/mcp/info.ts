/**
 * `get_file_info` and `list_allowed_directories`.
 *
 * @since 0.1.0
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { stat } from "./access.ts"
import { type Context, target } from "./context.ts"
import { at, symlinkRefusal, ToolFailure } from "./failures.ts"
import { textResult } from "./format.ts"

/**
 * The reference's lines, in its order: size, created, modified, accessed (each a `Date` as
 * JavaScript prints it), isDirectory, isFile, permissions (the last three octal digits of the
 * mode). The reference describes what a link points at; pinnedfs refuses a link, and a hard-linked
 * file, whose metadata may be an outside file's.
 *
 * @since 0.1.0
 */
export const getFileInfo = async (ctx: Context, args: { readonly path: string }): Promise<CallToolResult> => {
  const t = await target(ctx, args.path)
  const info = await at({ syscall: "stat", abs: t.abs, onTheWay: "realpath" }, () => stat(t))
  if (info.type === "SymbolicLink") throw new ToolFailure(symlinkRefusal(t.abs))
  const lines: Array<[string, unknown]> = [
    ["size", Number(info.size)],
    // No birth time reported reads as the epoch, as Node shows it.
    ["created", new Date(Math.max(0, info.birthtimeMs))],
    ["modified", new Date(info.mtimeMs)],
    ["accessed", new Date(info.atimeMs)],
    ["isDirectory", info.type === "Directory"],
    ["isFile", info.type === "File"],
    ["permissions", info.mode.toString(8).slice(-3)]
  ]
  return textResult(lines.map(([key, value]) => `${key}: ${String(value)}`).join("\n"))
}

/** @since 0.1.0 */
export const listAllowedDirectories = async (ctx: Context): Promise<CallToolResult> =>
  textResult(`Allowed directories:\n${ctx.allowed().texts.join("\n")}`)
