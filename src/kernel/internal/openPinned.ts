/**
 * `open` over a descriptor-relative executor: a pinnedfs extension that offers an `open` member
 * (the client's kernel refuses `open` everywhere but an isolated volume, since it can only open a
 * host path and check afterwards). The descriptor is opened by the executor beneath its pinned root,
 * by the resolution every request uses, so no link, hard link, `..` or moved-out directory can carry
 * the open outside; the kernel then binds the handle to the `dev:ino` it reports.
 *
 * From there it is `isolatedOpen.ts`'s handle: every read re-authorizes `fs:read` and every write
 * `fs:write` on the path, and then confirms by an executor `stat` that the path still names the
 * bound file. A read grant opens only `r`, whose descriptor is read-only; a revoked grant, a renamed
 * or replaced file, or a closed extension refuses the next call.
 *
 * @internal
 */
import { Effect, type FileSystem, type PlatformError, type Scope } from "effect"
import { openMemberOf } from "../../protocol/extensions.ts"
import type { Authorizer } from "./authorize.ts"
import { openBound } from "./isolatedOpen.ts"

type OpenOptions = { readonly flag?: FileSystem.OpenFlag | undefined; readonly mode?: number | undefined } | undefined

/** Whether the extension under the authorizer opens files itself. @internal */
export const opensPinned = (auth: Authorizer): boolean => openMemberOf(auth.atomic) !== undefined && auth.root.rootIdentity !== undefined

/**
 * Opens `path` (normalized) through the executor after its flag's checks, bound to the file opened.
 *
 * @internal
 */
export const openPinned = (
  auth: Authorizer,
  path: string,
  options: OpenOptions
): Effect.Effect<FileSystem.File, PlatformError.PlatformError, Scope.Scope> => {
  const member = openMemberOf(auth.atomic)
  const { boundaryRoot, logicalRoot, rootIdentity } = auth.root
  if (member === undefined || rootIdentity === undefined) return Effect.die("openPinned without an executor that opens")
  return openBound(
    {
      path,
      requireIdentity: true,
      stat: (p) => auth.run({ operation: "stat", path: p }),
      open: (opts) => member({ operation: "open", path, boundaryRoot, logicalRoot, rootIdentity, options: opts }),
      authorize: (action) => Effect.asVoid(auth.authorize([{ action, value: path }])),
      stale: (action) => auth.deny(action, path, "descriptor no longer names the resource at its authorized path")
    },
    options
  )
}
