/**
 * Phase 2 of authorization, pinnedfs's additions, asked only once every question of phase 1 was
 * answered (see docs/kernel.md): the executor acts on the path the caller gave, so when that path
 * differs from the resource it resolved to (a link on the way) the path itself is asked about too;
 * and when phase 1 refused for any reason other than the store's answer about that very path, the
 * path is asked about before the refusal is reported, so that a denied path is refused the same
 * way whatever lies behind it.
 *
 * @internal
 */
import { Effect, type Path, type PlatformError } from "effect"
import type { Action } from "../../Permission.ts"
import type { Granted, Need, PhaseOneRefusal } from "../authorize.ts"
import type { Root } from "../../../protocol/root.ts"
import { isInside } from "../paths.ts"

/** What phase 2 is built from. @internal */
export interface PhaseTwoContext {
  readonly path: Path.Path
  readonly root: Root<string | undefined>
  readonly lexicalOf: (need: Need) => string
  readonly check: (action: Action, resource: string) => Effect.Effect<void, PlatformError.PlatformError>
}

/** @internal */
export const phaseTwoOf = ({ path, root, lexicalOf, check }: PhaseTwoContext) => ({
  /** For a need whose phase 1 succeeded: the path itself when it differs. */
  entry: (granted: Granted): Effect.Effect<void, PlatformError.PlatformError> =>
    granted.lexical !== granted.resource && isInside(path, root.logicalRoot, granted.lexical)
      ? check(granted.need.action, granted.lexical)
      : Effect.void,
  /** For a need whose phase 1 refused: the refusal to report, the path asked about first. */
  conceal: (need: Need, refusal: PhaseOneRefusal): Effect.Effect<never, PlatformError.PlatformError> => {
    const lexical = lexicalOf(need)
    return refusal.ownAnswered || !isInside(path, root.logicalRoot, lexical)
      ? Effect.fail(refusal.error)
      : Effect.flatMap(check(need.action, lexical), () => Effect.fail(refusal.error))
  }
})

/** Phase 2's functions over one context. @internal */
export type PhaseTwo = ReturnType<typeof phaseTwoOf>
