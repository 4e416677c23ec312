/**
 * What a request's `exclude` list means, decided once for every executor: Effect's `glob` matches an
 * exclude against the path as its walk spells it, and a kernel sends the caller's pattern made
 * absolute, so a relative exclude is read against the request's `root`. The native extension, the
 * path-based fallback and the test hosts all anchor excludes here, so they cannot drift apart.
 *
 * @since 0.1.0
 */
import * as NPath from "node:path"
import { Glob } from "effect"

/**
 * The request's excludes as absolute patterns: a relative one read against `root` (escaped: the
 * root's own name is literal, even when it holds glob syntax), an absolute one as it is. A relative
 * exclude with no segment of its own (`""`, `"."`, `"./"`) can match nothing in Effect's walk and is
 * dropped rather than turned into the root itself.
 *
 * @since 0.1.0
 * @category conversions
 */
export const anchorExcludes = (root: string, exclude: ReadonlyArray<string>): Array<string> => {
  const anchored: Array<string> = []
  const base = NPath.posix.resolve(root).replace(/\/+$/, "")
  for (const e of exclude) {
    if (e.startsWith("/")) {
      anchored.push(e)
      continue
    }
    if (e.split("/").every((segment) => segment === "" || segment === ".")) continue
    anchored.push(`${Glob.escape(base)}/${e}`)
  }
  return anchored
}
