/**
 * Malformed input to the kernel is a `BadArgument` failure: never a synchronous throw, never a
 * defect, never a request sent on a guess. Batch members that are malformed fail alone, as the
 * executors fail them.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, FileSystem, Layer, Result } from "effect"
import { FileSystemBatch, GrantStore } from "../../src/kernel/index.ts"
import { scratch } from "../support/tree.ts"
import { hosts } from "./support/hosts.ts"
import { allowAll, kernelLayer, reasonTag } from "./support/kernel.ts"

const malformedMembers: ReadonlyArray<readonly [string, unknown]> = [
  ["a read without a path", { operation: "readFile" }],
  ["a path that is not a string", { operation: "stat", path: 42 }],
  ["a path with a NUL byte", { operation: "exists", path: "a\0b" }],
  ["an unknown operation", { operation: "unlink", path: "a.txt" }],
  ["a write", { operation: "writeFile", path: "a.txt", data: "" }],
  ["no operation", { path: "a.txt" }],
  ["null", null],
  ["a string", "a.txt"],
  ["a glob without a root", { operation: "glob", path: "*.txt" }],
  ["a glob whose root is not a string", { operation: "glob", path: "*.txt", root: 7 }],
  ["an encoding that is not a string", { operation: "readFileString", path: "a.txt", encoding: 5 }],
  ["recursive that is not a boolean", { operation: "readDirectory", path: ".", options: { recursive: "yes" } }],
  ["an accessor", Object.defineProperty({ operation: "readFile" }, "path", { get: () => "a.txt", enumerable: true })]
]

type Outcome<A> = { readonly threw: string } | { readonly succeeded: A } | { readonly died: string } | { readonly failed: unknown }

/** Runs `make()` and reports how it ended: a throw, a defect, or the effect's own result. */
const outcome = <A>(make: () => Effect.Effect<A, unknown>): Effect.Effect<Outcome<A>> =>
  Effect.suspend((): Effect.Effect<Outcome<A>> => {
    let effect: Effect.Effect<A, unknown>
    try {
      effect = make()
    } catch (thrown) {
      return Effect.succeed({ threw: String(thrown) })
    }
    return Effect.map(
      Effect.exit(effect),
      (exit): Outcome<A> =>
        Exit.isSuccess(exit)
          ? { succeeded: exit.value }
          : Cause.hasDies(exit.cause)
            ? { died: String(Cause.squash(exit.cause)) }
            : { failed: Cause.squash(exit.cause) }
    )
  })

describe.each(hosts)("malformed input ($name)", (host) => {
  for (const [name, member] of malformedMembers) {
    it.effect(`a batch member that is ${name} fails alone as BadArgument; the others are answered`, () =>
      Effect.gen(function* () {
        const s = scratch()
        s.make({ "a.txt": "alpha" })
        const got = yield* Effect.gen(function* () {
          const fs = yield* FileSystem.FileSystem
          const batch = FileSystemBatch.fromFileSystem(fs)!
          return yield* outcome(() =>
            batch.execute([
              member,
              { operation: "readFileString", path: "a.txt" }
            ] as unknown as ReadonlyArray<FileSystemBatch.BatchRequest>)
          )
        }).pipe(Effect.provide(kernelLayer(host.make().layer, s.root, allowAll(s.root))))
        expect("succeeded" in got, JSON.stringify(got)).toBe(true)
        const entries = "succeeded" in got ? [...got.succeeded.entries].sort((a, b) => a.index - b.index) : []
        expect(entries.length).toBe(2)
        expect(Result.isFailure(entries[0]!.result) && reasonTag(entries[0]!.result.failure)).toBe("BadArgument")
        expect(Result.isSuccess(entries[1]!.result) && entries[1]!.result.success).toEqual({
          operation: "readFileString",
          value: "alpha"
        })
      })
    )
  }

  it.effect("a batch that is not an array fails as BadArgument", () =>
    Effect.gen(function* () {
      const s = scratch()
      const got = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        const batch = FileSystemBatch.fromFileSystem(fs)!
        return yield* Effect.forEach([null, undefined, "x", { length: 1, 0: { operation: "exists", path: "a" } }], (requests) =>
          outcome(() => batch.execute(requests as never))
        )
      }).pipe(Effect.provide(kernelLayer(host.make().layer, s.root, allowAll(s.root))))
      for (const one of got) expect("failed" in one && reasonTag(one.failed), JSON.stringify(one)).toBe("BadArgument")
    })
  )

  it.effect("asks nothing and sends nothing for a malformed member", () =>
    Effect.gen(function* () {
      const s = scratch()
      const asked: Array<string> = []
      const store = GrantStore.GrantStore.of({ check: (capability) => Effect.sync(() => void asked.push(capability.resource)) })
      yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        const batch = FileSystemBatch.fromFileSystem(fs)!
        yield* outcome(() => batch.execute(malformedMembers.map(([, m]) => m) as never))
      }).pipe(Effect.provide(kernelLayer(host.make().layer, s.root, Layer.succeed(GrantStore.GrantStore, store))))
      expect(asked).toEqual([])
    })
  )
})
