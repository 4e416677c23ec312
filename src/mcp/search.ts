/**
 * `search_files`: every entry below a directory whose path relative to it matches a glob
 * (minimatch, `dot: true`, as the reference), excluded paths neither listed nor entered.
 *
 * A link is listed like any other entry and never entered: the reference lists the links it can
 * follow inside the allowed directories and skips the others (it checks each entry's target),
 * while pinnedfs reads no link's target. A subdirectory that fails to list is skipped, as the
 * reference skips it.
 *
 * @since 0.1.0
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Minimatch } from "minimatch"
import { type Context, target } from "./context.ts"
import { childOf } from "./entries.ts"
import { textResult } from "./format.ts"
import { Budget, listed, TooManyEntries } from "./listings.ts"
import type { Target } from "./paths.ts"

/** @since 0.1.0 */
export const searchFiles = async (
  ctx: Context,
  args: { readonly path: string; readonly pattern: string; readonly excludePatterns?: ReadonlyArray<string> | undefined }
): Promise<CallToolResult> => {
  const top = await target(ctx, args.path)
  // Compiled once per call, not once per entry: a tree of a million names would otherwise compile
  // each pattern a million times on the JavaScript thread.
  const excludes = (args.excludePatterns ?? []).map((p) => new Minimatch(p, { dot: true }))
  const pattern = new Minimatch(args.pattern, { dot: true })
  const budget = new Budget("search_files", ctx.maxEntries, top.abs)
  const search = async (t: Target, prefix: string): Promise<Array<string>> => {
    const list = await listed(t)
    budget.spend(list.length)
    const found = await Promise.all(
      list.map(async (e): Promise<Array<string>> => {
        const rel = prefix === "" ? e.name : `${prefix}/${e.name}`
        if (excludes.some((p) => p.match(rel))) return []
        const here = pattern.match(rel) ? [childOf(t, e.name).abs] : []
        if (e.kind !== "directory") return here
        const below = await search(childOf(t, e.name), rel).catch((u: unknown) => {
          if (u instanceof TooManyEntries) throw u
          return []
        })
        return [...here, ...below]
      })
    )
    return found.flat()
  }
  const results = await search(top, "")
  return textResult(results.length > 0 ? results.join("\n") : "No matches found")
}
