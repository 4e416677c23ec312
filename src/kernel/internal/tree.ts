/**
 * Authorizing an operation on a whole tree.
 *
 * A recursive `remove` and a `rename` of a directory act on every entry below the path they name,
 * and a grant store decides one path at a time: a write grant on `src` says nothing about
 * `src/keep/data`, which may have a rule of its own. So the tree is listed through the executor
 * (no link followed: a link inside is one entry, acted on as itself) and every entry is asked for,
 * in listing order, before anything is changed. One refusal refuses the whole operation.
 *
 * The refusal names the path the caller gave, never the entry that was refused: the caller may not
 * be allowed to know the names under it.
 *
 * What is authorized is the tree as listed just before the operation. An entry another process
 * creates below it in between is carried along (rename) or removed (remove) with the rest.
 *
 * @internal
 */
import { Effect, type Path, type PlatformError, Result } from "effect"
import { type Action, GrantStoreError, PermissionDenied, toPlatformError } from "../Permission.ts"
import type { AtomicRequest, AtomicResult } from "../../protocol/wire.ts"

type Run = <R extends AtomicRequest>(request: R) => Effect.Effect<AtomicResult<R>, PlatformError.PlatformError>

/**
 * The entries below `resource`, relative to it, in the executor's listing order: none when it is
 * not a directory (a file, a link, a hard-linked file the executor will not stat) or is missing.
 * Any other failure to look is a failure of the operation: a tree that cannot be listed is not
 * acted on blind.
 *
 * @internal
 */
export const entriesBelow = (run: Run, resource: string): Effect.Effect<ReadonlyArray<string>, PlatformError.PlatformError> =>
  run({ operation: "stat", path: resource }).pipe(
    Effect.map((info) => info.type === "Directory"),
    Effect.catchIf(
      (error) => error.reason._tag !== "NotFound",
      (error) =>
        // The executor refuses to stat some entries it may still unlink (a hard-linked file). A
        // listing then tells a directory from anything else.
        run({ operation: "readDirectory", path: resource }).pipe(
          Effect.as(true),
          Effect.catchIf(
            (listing) => listing.reason._tag === "BadResource",
            () => Effect.succeed(false)
          ),
          Effect.mapError(() => error)
        )
    ),
    Effect.catchIf(
      (error) => error.reason._tag === "NotFound",
      () => Effect.succeed(false)
    ),
    Effect.flatMap((directory) =>
      directory ? run({ operation: "readDirectory", path: resource, options: { recursive: true } }) : Effect.succeed([])
    )
  )

/** One question about one entry of a tree: which action, on which side of the operation. @internal */
export interface TreeQuestion {
  readonly action: Action
  /** The path the caller gave for this side (what a refusal names). */
  readonly top: string
}

/**
 * Asks `questions` about every entry below each question's `top`, entry by entry in listing order
 * (every question for one entry before the next entry). Refused as a whole, naming the `top` whose
 * question failed.
 *
 * @internal
 */
export const authorizeTree = (options: {
  readonly path: Path.Path
  readonly method: string
  readonly entries: ReadonlyArray<string>
  readonly questions: ReadonlyArray<TreeQuestion>
  /** The store's decision; fails only when the store cannot decide. */
  readonly decide: (action: Action, resource: string) => Effect.Effect<boolean, PlatformError.PlatformError>
}): Effect.Effect<void, PlatformError.PlatformError> =>
  Effect.gen(function* () {
    const { entries, method, path, questions } = options
    for (const entry of entries) {
      for (const question of questions) {
        const capability = { action: question.action, resource: question.top }
        const decided = yield* Effect.result(options.decide(question.action, path.join(question.top, entry)))
        if (Result.isSuccess(decided) && decided.success) continue
        return yield* Effect.fail(
          toPlatformError({
            method,
            error: Result.isFailure(decided)
              ? new GrantStoreError({ capability, message: "the grant store failed while deciding the entries below this path" })
              : new PermissionDenied({ capability, reason: `${question.action} is not granted for every entry below this path` })
          })
        )
      }
    }
  })
