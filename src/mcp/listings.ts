/**
 * The listing tools: `list_directory`, `list_directory_with_sizes`, `directory_tree`. A link is
 * listed as a file, as the reference's `readdir` types it, and never entered.
 *
 * @since 0.1.0
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Minimatch } from "minimatch"
import { type Context, target } from "./context.ts"
import { childOf, described, type Entry, kinds } from "./entries.ts"
import { at, ToolFailure } from "./failures.ts"
import { formatSize, textResult } from "./format.ts"
import type { Target } from "./paths.ts"

/**
 * A directory's entries, failing as the reference's `readdir` reports (`scandir`): with their
 * sizes (one lstat each), or only whether each is a directory.
 *
 * @since 0.1.0
 */
export const listed = (t: Target, sizes = false): Promise<Array<Entry>> =>
  at({ syscall: "scandir", abs: t.abs }, () => (sizes ? described(t) : kinds(t)))

const tag = (e: Entry): string => (e.kind === "directory" ? "[DIR]" : "[FILE]")

/** @since 0.1.0 */
export const listDirectory = async (ctx: Context, args: { readonly path: string }): Promise<CallToolResult> => {
  const t = await target(ctx, args.path)
  const list = await listed(t)
  return textResult(list.map((e) => `${tag(e)} ${e.name}`).join("\n"))
}

/**
 * Sizes are lstat's: a link shows its own size, not its target's (the reference follows it, even
 * out of the allowed directories), and a hard-linked file shows 0, as the reference shows an entry
 * it could not stat.
 *
 * @since 0.1.0
 */
export const listDirectoryWithSizes = async (
  ctx: Context,
  args: { readonly path: string; readonly sortBy?: "name" | "size" | undefined }
): Promise<CallToolResult> => {
  const t = await target(ctx, args.path)
  const list = await listed(t, true)
  const sorted = [...list].sort((a, b) => (args.sortBy === "size" ? b.size - a.size : a.name.localeCompare(b.name)))
  const isDir = (e: Entry) => e.kind === "directory"
  const lines = sorted.map((e) => `${tag(e)} ${e.name.padEnd(30)} ${isDir(e) ? "" : formatSize(e.size).padStart(10)}`)
  const files = list.filter((e) => !isDir(e))
  const total = files.reduce((sum, e) => sum + e.size, 0)
  const summary = ["", `Total: ${files.length} files, ${list.length - files.length} directories`, `Combined size: ${formatSize(total)}`]
  return textResult([...lines, ...summary].join("\n"))
}

/**
 * The reference's exclusion test: a pattern with `*` matches the path relative to the tree's top;
 * one without also matches as a name anywhere, or as a directory anything lies under.
 */
const excludedBy = (patterns: ReadonlyArray<string>) => {
  // Each compiled once per call, not once per entry.
  const compiled = patterns
    .flatMap((p) => (p.includes("*") ? [p] : [p, `**/${p}`, `**/${p}/**`]))
    .map((p) => new Minimatch(p, { dot: true }))
  return (rel: string) => compiled.some((m) => m.match(rel))
}

interface TreeNode {
  name: string
  type: "file" | "directory"
  children?: Array<TreeNode>
}

/** The walk bound was passed: the whole call fails, never one branch of it. @since 0.1.0 @category errors */
export class TooManyEntries extends ToolFailure {}

/**
 * Counts what one call walks: past the bound the call fails, naming it, instead of building an
 * answer without end. @since 0.1.0 @category models
 */
export class Budget {
  private left: number
  constructor(
    private readonly tool: string,
    private readonly limit: number,
    private readonly where: string
  ) {
    this.left = limit
  }
  spend(n: number): void {
    this.left -= n
    if (this.left < 0) {
      throw new TooManyEntries(
        `${this.tool}: more than ${this.limit} entries under ${this.where} (pinnedfs bounds what one call walks; narrow the path or exclude more)`
      )
    }
  }
}

/** @since 0.1.0 */
export const directoryTree = async (
  ctx: Context,
  args: { readonly path: string; readonly excludePatterns?: ReadonlyArray<string> | undefined }
): Promise<CallToolResult> => {
  const top = await target(ctx, args.path)
  const excluded = excludedBy(args.excludePatterns ?? [])
  const budget = new Budget("directory_tree", ctx.maxEntries, top.abs)
  const build = async (t: Target, prefix: string): Promise<Array<TreeNode>> => {
    const list = await listed(t)
    budget.spend(list.length)
    const kept = list.filter((e) => !excluded(prefix === "" ? e.name : `${prefix}/${e.name}`))
    return Promise.all(
      kept.map(async (e): Promise<TreeNode> => {
        if (e.kind !== "directory") return { name: e.name, type: "file" }
        return {
          name: e.name,
          type: "directory",
          children: await build(childOf(t, e.name), prefix === "" ? e.name : `${prefix}/${e.name}`)
        }
      })
    )
  }
  return textResult(JSON.stringify(await build(top, ""), null, 2))
}
