/**
 * Authorization's view of a path over a host whose executor does not resolve without following
 * (no `noFollowAuthorization`): the host's own `realPath` names the resource. It is asked about
 * every existing ancestor (a missing tail kept as requested), and a link the host cannot resolve
 * (dangling) is read and its text resolved in its place, at most 40 times. A resource inside the
 * canonical workspace is spelled below the logical root, so grants written against the workspace
 * as the program names it keep applying when that name is itself a link.
 *
 * This asks the host about paths, so it is only as strong as the host: a component swapped between
 * two questions is not noticed. That is why it is reserved for hosts that do not claim no-follow
 * authorization, and why a hard-linked file is refused outright (see {@link hardLinkGuard}).
 * `canonicalResource` is public (pinnedfs/kernel re-exports it); the rest is the kernel's own.
 *
 * @since 0.1.0
 */
import { Effect, type FileSystem, Option, type Path, type PlatformError } from "effect"
import { isInside } from "./paths.ts"
import { maxLinkHops } from "./resolve.ts"

/**
 * The resource `value` names for a host asked for its own `realPath`: resolved through every
 * existing ancestor (a dangling link read and resolved in its place), and spelled below the
 * workspace root as the program names it when it lies inside the canonical workspace; otherwise
 * its canonical path, for the caller to deny as outside. What the kernel asks the grant store
 * about over an executor without `noFollowAuthorization`. `workspaceRoot` and `value` are
 * normalized first, `value` read against the workspace root when relative.
 *
 * @since 0.1.0
 * @category security
 */
export const canonicalResource = (
  host: FileSystem.FileSystem,
  path: Path.Path,
  workspaceRoot: string,
  relativeOrAbsolute: string
): Effect.Effect<string, PlatformError.PlatformError> => {
  const logicalRoot = path.normalize(workspaceRoot)
  const value = path.normalize(path.isAbsolute(relativeOrAbsolute) ? relativeOrAbsolute : path.resolve(logicalRoot, relativeOrAbsolute))
  const existing = (candidate: string, hops: number): Effect.Effect<string, PlatformError.PlatformError> =>
    host.realPath(candidate).pipe(
      Effect.catch((error) => {
        const throughParent = () => {
          const parent = path.dirname(candidate)
          return parent === candidate
            ? Effect.fail(error)
            : Effect.map(existing(parent, hops), (resolved) => path.join(resolved, path.basename(candidate)))
        }
        return host.readLink(candidate).pipe(
          Effect.matchEffect({
            onFailure: throughParent,
            onSuccess: (target) =>
              hops >= maxLinkHops
                ? Effect.fail(error)
                : existing(path.isAbsolute(target) ? target : path.resolve(path.dirname(candidate), target), hops + 1)
          })
        )
      })
    )
  return Effect.map(Effect.all([host.realPath(logicalRoot), existing(value, 0)]), ([canonicalRoot, canonical]) =>
    isInside(path, canonicalRoot, canonical)
      ? path.normalize(path.join(logicalRoot, path.relative(canonicalRoot, canonical)))
      : path.normalize(canonical)
  )
}

/**
 * Whether the host says `value` is a regular file with more than one name. Such a file's other
 * name may live outside the workspace, and a host that follows paths cannot tell which name it is
 * acting through, so it is refused. A path the host cannot stat is left to the operation.
 *
 * @internal
 */
export const hardLinked = (host: FileSystem.FileSystem, value: string): Effect.Effect<boolean> =>
  host.stat(value).pipe(
    Effect.map((info) => info.type === "File" && Option.isSome(info.nlink) && info.nlink.value > 1),
    Effect.orElseSucceed(() => false)
  )

/** @internal */
export const hardLinkGuard = "hard-linked files cannot be confined to the workspace"
