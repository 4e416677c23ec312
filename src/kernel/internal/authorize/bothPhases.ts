/**
 * Both phases of authorization put together: every need through phase 1, then every need through
 * phase 2 (`authorize`); or one need, then the request it was for, with one executor trip fewer
 * when it can be spared (`authorizeThen`).
 *
 * @internal
 */
import { Effect, type PlatformError, type Result } from "effect"
import type { Granted, Need } from "../authorize.ts"
import type { PhaseOne } from "./phaseOne.ts"
import type { PhaseTwo } from "./phaseTwo.ts"

/** @internal */
export const bothPhasesOf = (
  noFollow: boolean,
  one: PhaseOne,
  two: PhaseTwo,
  /**
   * Whether the store promised, before anything is sent, to grant `need` on the caller's own path
   * at once and unobserved (`GrantStore.grantsBelow` of its directory): see `authorizeThen`.
   */
  promised: (need: Need) => boolean = () => false
) => {
  const { ask, confirm, decideFirst, lexicalOf, phaseOne } = one
  const { conceal, entry } = two

  const authorize = (needs: ReadonlyArray<Need>) =>
    Effect.gen(function* () {
      const granted: Array<Granted> = []
      for (const need of needs) {
        const resource = yield* Effect.catch(phaseOne(need), (refusal) => conceal(need, refusal))
        granted.push({ need, resource, lexical: lexicalOf(need) })
      }
      for (const one of granted) yield* entry(one)
      return granted
    })

  /**
   * One need authorized, then `use` run: the same questions, in the same order, and the same
   * answers as `authorize` followed by `use`, with one executor trip fewer when it can be spared.
   *
   * Over a no-follow executor, when the path resolved to itself (no link on it) and the store
   * answered at once (nothing waited on a person, a journal or another fiber, so the first
   * resolution is as fresh as a second would be), the store was asked about the very path the
   * operation names, and `attempt`, a request that refuses or reports any link it meets, is sent
   * at once: it cannot describe anything but what was granted, so it stands in for the second
   * resolution. `answer` takes its outcome only when that outcome proves no link lay on the path,
   * and says what `use` would then have answered: `use`'s own value for a read, or for `exists`
   * (whose request answers `true` for a final link without saying so) the `stat` it sent instead:
   * a description of anything but a link is `true`, a component missing before any link is `false`
   * (a no-follow lookup runs in order and stops at the first link, so a missing component was
   * reached with none before it). A decision that waited always takes the full protocol: nothing
   * is sent on a path until it has been resolved again after the wait. Any outcome `answer` does
   * not take (a link that appeared during the decision among them, or a no-follow `stat`
   * describing a final link) hands over to the full protocol from where it was: the second
   * resolution, its refusal when the path now names something else, and `use`. Any other path (a
   * link on it, a host asked for `realPath`) takes the full protocol from the start. `attempt` must
   * be one request with no effect when it fails and no question of its own; the guarded
   * `readFile`, `readFileString`, `stat`, `lstat` and `exists` use it (`readLink` and `realPath`
   * answer about a final link without refusing it, so they keep the full protocol).
   *
   * When the store has promised before anything is sent (`promised`: `grantsBelow` of the
   * directory of the caller's path, which says the store would grant every name below it at once,
   * recording nothing and waiting on no one), `attempt` goes first and the first resolution is
   * spared too: an outcome `answer` takes proves no link lay on the path, so the resolution would
   * have named the caller's own path, which is what the store is then asked about, the client's
   * one question. The outcome is answered only once the store granted it, and only if the store
   * did not wait after all (a store that broke its promise gets the second resolution and `use`,
   * as after any wait). An outcome `answer` does not take goes to the protocol from the start, the
   * attempt not sent again: a link on the path, or an error, costs the one trip the look took.
   */
  const authorizeThen = <A, L>(
    need: Need,
    attempt: Effect.Effect<L, PlatformError.PlatformError>,
    answer: (outcome: Result.Result<L, PlatformError.PlatformError>) => Result.Result<A, PlatformError.PlatformError> | undefined,
    use: Effect.Effect<A, PlatformError.PlatformError>
  ): Effect.Effect<A, PlatformError.PlatformError> => {
    // Chained rather than generated: this runs on every guarded read, stat and exists, and a
    // generator's iterator and per-step suspension cost more than the chain of the same steps.
    const full = (before: string, own: boolean) =>
      Effect.flatMap(
        Effect.catch(confirm(need, before, own), (refusal) => conceal(need, refusal)),
        () => Effect.flatMap(entry({ need, resource: before, lexical: lexicalOf(need) }), () => use)
      )
    const afterDecision = (attemptAgain: boolean) =>
      Effect.flatMap(
        Effect.catch(decideFirst(need), (refusal) => conceal(need, refusal)),
        ({ before, own, waited }) =>
          attemptAgain && noFollow && own && !waited
            ? Effect.flatMap(Effect.result(attempt), (outcome) => {
                const taken = answer(outcome)
                return taken !== undefined ? Effect.fromResult(taken) : full(before, own)
              })
            : full(before, own)
      )
    if (!(noFollow && promised(need))) return afterDecision(true)
    return Effect.flatMap(Effect.result(attempt), (outcome) => {
      const taken = answer(outcome)
      if (taken === undefined) return afterDecision(false)
      const own = lexicalOf(need)
      // The store's own refusal of the caller's path, if it comes, is reported as it is: there is
      // nothing behind the path left to conceal.
      return Effect.flatMap(
        Effect.catch(ask(need, own), (refusal) => conceal(need, refusal)),
        (waited) => (waited ? full(own, true) : Effect.fromResult(taken))
      )
    })
  }

  return { authorize, authorizeThen }
}
