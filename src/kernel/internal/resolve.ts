/**
 * Authorization's view of a path: the resource it names, found by asking the executor's no-follow
 * `resolve` and following link text lexically, never by letting the host follow anything.
 *
 * @internal
 */
import { Effect, type Path, type PlatformError, Result } from "effect"
import type { Resolution } from "../../protocol/wire.ts"
import type { Root } from "../../protocol/root.ts"
import { isInside, normalAbsolute, segmentsBelow, toBoundary, toLogical } from "./paths.ts"

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
  root: Root<string | undefined>,
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

/** Where a `resolve` answer stopped, read below the boundary root. */
const reachedOf = (path: Path.Path, root: Root<string | undefined>, resolution: Resolution): string =>
  // An executor may answer root-relative or absolute; both are read below the boundary root. An
  // absolute answer already normalized (the usual one) is its own reading.
  normalAbsolute(resolution.path) ? resolution.path : path.normalize(path.resolve(root.boundaryRoot, resolution.path))

/**
 * What {@link follow} makes of a `resolve` answer with nothing left to ask: the resource when it met
 * no link, the refusal when it left the root; `undefined` when a link remains to be followed. Lets
 * a batch settle most of its members without building an effect for each.
 *
 * @internal
 */
export const settledResolution = (
  path: Path.Path,
  root: Root<string | undefined>,
  requested: string,
  resolution: Resolution
): Result.Result<string, Refusal> | undefined => {
  const reached = reachedOf(path, root, resolution)
  if (!isInside(path, root.boundaryRoot, reached)) {
    return Result.fail({ resource: toLogical(path, root, requested), reason: "path resolves outside the pinned root" })
  }
  return resolution.target === null ? Result.succeed(toLogical(path, root, reached)) : undefined
}

/** Turns one `resolve` answer for `requested` into the resource it names. @internal */
export const follow = (
  path: Path.Path,
  root: Root<string | undefined>,
  resolve: Resolve,
  requested: string,
  resolution: Resolution,
  hops: number
): Effect.Effect<string, Refusal> => {
  const settled = settledResolution(path, root, requested, resolution)
  if (settled !== undefined) return Effect.fromResult(settled)
  // Every resolution that met no link was settled above.
  const target = resolution.target as string
  const reached = reachedOf(path, root, resolution)
  if (hops >= maxLinkHops) {
    return Effect.fail({ resource: toLogical(path, root, reached), reason: "too many levels of symbolic links" })
  }
  // What the request still had to walk after the link; the link text replaces the link.
  const rest = segmentsBelow(path, root.boundaryRoot, requested).slice(segmentsBelow(path, root.boundaryRoot, reached).length)
  const next = path.resolve(path.dirname(reached), target, ...rest)
  return resourceOf(path, root, resolve, next, hops + 1)
}
