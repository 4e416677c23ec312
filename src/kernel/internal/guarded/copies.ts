/**
 * `copy` and `copyFile`. An isolated volume performs them itself. Over an executor a copy is built
 * from requests alone (`stat`, `readFile`, `writeFile`), and only for a regular file: a tree would
 * be many reads and writes, each outside the two that were authorized. The client's kernel
 * refuses both; pinnedfs performs the one case it can keep confined (see docs/kernel.md).
 *
 * @internal
 */
import { Effect, type FileSystem } from "effect"
import { unavailable } from "../refusing.ts"
import { base64, contentTooLarge, type Guard } from "./context.ts"

type Method<K extends keyof FileSystem.FileSystem> = FileSystem.FileSystem[K]

const copyOf = (guard: Guard, method: "copy" | "copyFile", from: unknown, to: unknown, overwrite: boolean) => {
  const {
    auth: { run },
    limit
  } = guard
  return guard.two(["fs:read", from], ["fs:write", to], method, (source, target) =>
    Effect.gen(function* () {
      const info = yield* run({ operation: "stat", path: source })
      // Only a regular file is one read and one write; a tree would be many, each unguarded.
      if (info.type !== "File") return yield* Effect.fail(unavailable("fs:read", method, source))
      const bytes = yield* run({ operation: "readFile", path: source })
      if (limit !== undefined && bytes.byteLength > limit) {
        return yield* Effect.fail(contentTooLarge(method, bytes.byteLength, limit))
      }
      yield* run({
        operation: "writeFile",
        path: target,
        data: base64(bytes),
        options: { flag: overwrite ? "w" : "wx", mode: info.mode & 0o777 }
      })
    })
  )
}

/**
 * @since 0.1.0
 * @internal
 */
export const copy = (guard: Guard): Method<"copy"> =>
  Effect.fn("FileSystem.copy")((from, to, raw) =>
    Effect.flatMap(guard.options("copy", raw), (opts) =>
      guard.isolated !== undefined
        ? guard.isolatedTwo(["fs:read", from], ["fs:write", to], "copy", (host, a, b) => host.copy(a, b, opts))
        : // Timestamps are not carried by any request: refused rather than silently dropped.
          opts?.preserveTimestamps === true
          ? guard.refuse("fs:read", "copy", from)
          : copyOf(guard, "copy", from, to, opts?.overwrite === true)
    )
  )

/**
 * @since 0.1.0
 * @internal
 */
export const copyFile = (guard: Guard): Method<"copyFile"> =>
  Effect.fn("FileSystem.copyFile")((from, to) =>
    guard.isolated !== undefined
      ? guard.isolatedTwo(["fs:read", from], ["fs:write", to], "copyFile", (host, a, b) => host.copyFile(a, b))
      : copyOf(guard, "copyFile", from, to, true)
  )
