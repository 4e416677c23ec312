/**
 * The methods that act on everything below the path they name: a recursive `remove` and a
 * `rename`. A grant store decides one path at a time, so every entry below is asked for before
 * anything changes (see `tree.ts`); a rename also reads what it moves, so that content the caller
 * may not read cannot reappear under a name it may.
 *
 * @internal
 */
import { Effect, type FileSystem } from "effect"
import type { Action } from "../../Permission.ts"
import { logicalOf } from "../paths.ts"
import { authorizeTree, entriesBelow } from "../tree.ts"
import type { Guard } from "./context.ts"

type Method<K extends keyof FileSystem.FileSystem> = FileSystem.FileSystem[K]

const treeDecide = (guard: Guard) => (action: Action, resource: string) => guard.auth.decide(action, resource)

/**
 * @since 0.1.0
 * @internal
 */
export const remove = (guard: Guard): Method<"remove"> =>
  Effect.fn("FileSystem.remove")((value, raw) =>
    Effect.flatMap(guard.options("remove", raw), (opts) =>
      guard.one("fs:write", "remove", value, (p) =>
        Effect.gen(function* () {
          const { path, root, run } = guard.auth
          if (opts?.recursive === true) {
            // Everything below is removed too: everything below must be writable.
            const entries = yield* entriesBelow(run, p)
            const top = logicalOf(path, root, p)
            yield* authorizeTree({
              path,
              method: "write",
              entries,
              questions: [{ action: "fs:write", top }],
              decide: treeDecide(guard)
            })
          }
          return yield* run({ operation: "remove", path: p, options: opts })
        })
      )
    )
  )

/**
 * @since 0.1.0
 * @internal
 */
export const rename = (guard: Guard): Method<"rename"> =>
  Effect.fn("FileSystem.rename")((from, to) =>
    guard.two(["fs:write", from], ["fs:write", to], "rename", (source, target) =>
      Effect.gen(function* () {
        const { auth } = guard
        const { path, root, run } = auth
        const old = logicalOf(path, root, source)
        const next = logicalOf(path, root, target)
        // A rename reads what it moves: content the caller may not read must not reappear under
        // a name it may. The whole moved tree is written at both names and read at the old one.
        yield* auth.check("fs:read", old)
        const entries = yield* entriesBelow(run, source)
        yield* authorizeTree({
          path,
          method: "write",
          entries,
          questions: [
            { action: "fs:write", top: old },
            { action: "fs:read", top: old },
            { action: "fs:write", top: next }
          ],
          decide: treeDecide(guard)
        })
        return yield* run({ operation: "rename", from: source, to: target })
      })
    )
  )
