/**
 * Authorization's view of a path: the resource it names, found by asking the executor's no-follow
 * `resolve` and following link text lexically, never by letting the host follow anything.
 *
 * @internal
 */
import { Effect, type Path, type PlatformError } from "effect"
import type { Resolution } from "../../protocol/wire.ts"
import { isInside, type KernelRoot, segmentsBelow, toBoundary, toLogical } from "./paths.ts"

/** Links followed while resolving one path before giving up, as the kernel's ELOOP. @internal */
export const maxLinkHops = 40

/** Why a resolution was refused; the caller turns it into a denial. @internal */
export interface Refusal {
  readonly resource: string
  readonly reason: string
  readonly cause?: PlatformError.PlatformError | undefined
}

/** Asks the executor to resolve one boundary-spelled path. @internal */
export type Resolve = (boundaryPath: string) => Effect.Effect<Resolution, PlatformError.PlatformError>

/**
 * The resource `value` (absolute, normalized) names: a logical-spelling path inside the workspace,
 * or the untouched path outside both roots (for the caller to deny as outside).
 *
 * @internal
 */
export const resourceOf = (
  path: Path.Path,
  root: KernelRoot,
  resolve: Resolve,
  value: string,
  hops = 0
): Effect.Effect<string, Refusal> => {
  const requested = toBoundary(path, root, value)
  if (requested === undefined) return Effect.succeed(path.normalize(value))
  return resolve(requested).pipe(
    Effect.mapError(
      (cause): Refusal => ({
        resource: toLogical(path, root, requested),
        reason: "path component could not be inspected without following it",
        cause
      })
    ),
    Effect.flatMap((resolution) => follow(path, root, resolve, requested, resolution, hops))
  )
}

/** Turns one `resolve` answer for `requested` into the resource it names. @internal */
export const follow = (
  path: Path.Path,
  root: KernelRoot,
  resolve: Resolve,
  requested: string,
  resolution: Resolution,
  hops: number
): Effect.Effect<string, Refusal> => {
  // An executor may answer root-relative or absolute; both are read below the boundary root.
  const reached = path.normalize(path.resolve(root.boundaryRoot, resolution.path))
  if (!isInside(path, root.boundaryRoot, reached)) {
    return Effect.fail({ resource: toLogical(path, root, requested), reason: "path resolves outside the pinned root" })
  }
  if (resolution.target === null) return Effect.succeed(toLogical(path, root, reached))
  if (hops >= maxLinkHops) {
    return Effect.fail({ resource: toLogical(path, root, reached), reason: "too many levels of symbolic links" })
  }
  // What the request still had to walk after the link; the link text replaces the link.
  const rest = segmentsBelow(path, root.boundaryRoot, requested).slice(segmentsBelow(path, root.boundaryRoot, reached).length)
  const next = path.resolve(path.dirname(reached), resolution.target, ...rest)
  return resourceOf(path, root, resolve, next, hops + 1)
}
