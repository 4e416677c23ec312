/**
 * Listings filtered by the read grants.
 *
 * The client's kernel authorizes a listing once (a directory, or a glob's literal prefix) and then
 * hands back every name the executor found, including names the grants deny and names inside
 * directories the caller may not read. Here a listed name is a read of that name and of every
 * directory that holds it below the listed one: it is kept only when the store grants all of them.
 * Each directory is asked about once per listing, before the first name it holds; once one is
 * refused, nothing below it is asked about. Where the store can say that everything below a
 * directory is granted with nothing observing the question (`GrantStore.grantsBelow`), the names
 * below it are kept without a question each: the filter then costs one decision per directory, not
 * one per name, and its answer is the same.
 *
 * @internal
 */
import { Effect, type Path, type PlatformError } from "effect"
import { isPlainRelative } from "./paths.ts"

/**
 * The items of a listing the caller may read, in their order. `base` is the directory that was
 * listed (already authorized): the directories between it and an item are asked about as well. A
 * grant store that fails (rather than deciding) fails the listing: a name is never shown, or
 * hidden, on a guess.
 *
 * When the store grants everything strictly below `base` unasked, the listing takes that one
 * answer: every item in the workspace is shown and nothing is asked, which is what the walk below
 * would conclude name by name (each name's chain stops at a directory whose content is granted).
 * The shortcut is taken only when every item is `base` itself or plainly below it, so an item the
 * walk would treat otherwise never meets it.
 *
 * @internal
 */
export const readable = <A>(options: {
  readonly path: Path.Path
  readonly base: string
  readonly items: ReadonlyArray<A>
  /** The resource (logical spelling) an item names; `undefined` when outside the workspace. */
  readonly resourceOf: (item: A) => string | undefined
  /** The store's decision about reading one resource; a store that cannot decide fails. */
  readonly decide: (resource: string) => Effect.Effect<boolean, PlatformError.PlatformError>
  /** Whether the store grants reading everything strictly below a directory, unasked. */
  readonly grantsBelow?: ((directory: string) => boolean) | undefined
}): Effect.Effect<Array<A>, PlatformError.PlatformError> => {
  const { base, items, resourceOf } = options
  if (options.grantsBelow?.(base) === true) {
    const below = base === "/" ? "/" : `${base}/`
    const kept: Array<A> = []
    let plain = true
    for (const item of items) {
      const resource = resourceOf(item)
      if (resource === undefined) continue
      if (resource !== base && !resource.startsWith(below)) {
        plain = false
        break
      }
      kept.push(item)
    }
    if (plain) return Effect.succeed(kept)
  }
  return nameByName(options)
}

/** The walk: each undecided directory between `base` and an item asked about once, outermost first. */
const nameByName = <A>(options: Parameters<typeof readable<A>>[0]): Effect.Effect<Array<A>, PlatformError.PlatformError> =>
  Effect.gen(function* () {
    const { base, decide, path, resourceOf } = options
    const decided = new Map<string, boolean>()
    const below = new Map<string, boolean>()
    const covered = (directory: string) => {
      let known = below.get(directory)
      if (known === undefined) {
        known = options.grantsBelow?.(directory) === true
        below.set(directory, known)
      }
      return known
    }
    const kept: Array<A> = []
    for (const item of options.items) {
      const resource = resourceOf(item)
      if (resource === undefined) continue
      // The listed directory itself (a glob such as `dir/**` answers it) was what was authorized.
      if (resource === base) {
        kept.push(item)
        continue
      }
      // The undecided directories holding it below the listed one, then itself: outermost first.
      // Those below a directory whose whole content is granted are not asked about: they take the
      // answer of the directories above them.
      const chain: Array<string> = []
      const unasked: Array<string> = []
      let allowed: boolean | undefined
      for (let at = resource; ; ) {
        const known = decided.get(at)
        if (known !== undefined) {
          allowed = known
          break
        }
        const parent = path.dirname(at)
        if (parent !== at && covered(parent)) unasked.push(at)
        else chain.push(at)
        if (parent === base || parent === at || path.relative(base, parent).startsWith("..")) {
          allowed = true
          break
        }
        at = parent
      }
      for (let i = chain.length - 1; i >= 0; i--) {
        const at = chain[i]!
        // Nothing below a refused directory is asked about.
        if (allowed) allowed = yield* decide(at)
        decided.set(at, allowed)
      }
      for (const at of unasked) decided.set(at, allowed)
      if (allowed) kept.push(item)
    }
    return kept
  })

/**
 * A directory's own listing (its names, or paths below it for a recursive listing), filtered as
 * {@link readable} filters. When the directory is in the workspace and the store grants everything
 * strictly below it unasked, every plain name lies below it, inside the workspace and granted: the
 * names are shown as they are, with no string built and no question asked for any of them.
 *
 * @internal
 */
export const readableNames = (options: {
  readonly path: Path.Path
  /** The listed directory's logical spelling, or `undefined` when it is outside the workspace. */
  readonly inside: string | undefined
  /** The listed directory's logical spelling, inside the workspace or not. */
  readonly base: string
  readonly names: ReadonlyArray<string>
  readonly resourceOf: (name: string) => string | undefined
  readonly decide: (resource: string) => Effect.Effect<boolean, PlatformError.PlatformError>
  readonly grantsBelow?: ((directory: string) => boolean) | undefined
}): Effect.Effect<Array<string>, PlatformError.PlatformError> =>
  options.inside !== undefined && options.grantsBelow?.(options.inside) === true && options.names.every(isPlainRelative)
    ? Effect.succeed(options.names.slice())
    : readable({ ...options, items: options.names })
