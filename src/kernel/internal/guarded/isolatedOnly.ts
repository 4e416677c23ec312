/**
 * The methods no executor request expresses (`access`, `link`, `symlink`, `truncate`, `utimes`,
 * `watch`, `open`, `stream`, `sink`): performed by an attested isolated volume after the same
 * checks as any other method, and refused over any other host, as the client's kernel refuses
 * them. A descriptor-relative executor offers no request for them, so there is nothing confined
 * to delegate to; except `open`, which pinnedfs's extension offers as a member of its own
 * (`openPinned.ts`).
 *
 * @internal
 */
import { Effect, type FileSystem, Sink, Stream } from "effect"
import { openBound } from "../isolatedOpen.ts"
import { openPinned, opensPinned } from "../openPinned.ts"
import type { Guard } from "./context.ts"

type Method<K extends keyof FileSystem.FileSystem> = FileSystem.FileSystem[K]

/**
 * @since 0.1.0
 * @internal
 */
export const access = (guard: Guard): Method<"access"> =>
  Effect.fn("FileSystem.access")((value, raw) =>
    Effect.flatMap(guard.options("access", raw), (opts) => guard.isolatedOne("fs:read", "access", value, (host, p) => host.access(p, opts)))
  )

/**
 * @since 0.1.0
 * @internal
 */
export const link = (guard: Guard): Method<"link"> =>
  Effect.fn("FileSystem.link")((from, to) =>
    guard.isolatedTwo(["fs:read", from], ["fs:write", to], "link", (host, a, b) => host.link(a, b))
  )

/**
 * @since 0.1.0
 * @internal
 */
export const symlink = (guard: Guard): Method<"symlink"> =>
  Effect.fn("FileSystem.symlink")((from, to) => guard.isolatedOne("fs:write", "symlink", to, (host, p) => host.symlink(from, p)))

/**
 * @since 0.1.0
 * @internal
 */
export const truncate = (guard: Guard): Method<"truncate"> =>
  Effect.fn("FileSystem.truncate")((value, length) =>
    guard.isolatedOne("fs:write", "truncate", value, (host, p) => host.truncate(p, length))
  )

/**
 * @since 0.1.0
 * @internal
 */
export const utimes = (guard: Guard): Method<"utimes"> =>
  Effect.fn("FileSystem.utimes")((value, atime, mtime) =>
    guard.isolatedOne("fs:write", "utimes", value, (host, p) => host.utimes(p, atime, mtime))
  )

/**
 * @since 0.1.0
 * @internal
 */
export const watch =
  (guard: Guard): Method<"watch"> =>
  (value, raw) =>
    Stream.unwrap(
      Effect.fn("FileSystem.watch")(() =>
        Effect.flatMap(guard.options("watch", raw), (opts) =>
          guard.isolatedOne("fs:read", "watch", value, (host, p) => Effect.succeed(host.watch(p, opts)))
        )
      )()
    )

/**
 * @since 0.1.0
 * @internal
 */
export const open = (guard: Guard): Method<"open"> =>
  Effect.fn("FileSystem.open")((value, raw) =>
    Effect.flatMap(guard.options("open", raw), (opts) => {
      const { auth, isolated } = guard
      if (isolated === undefined) {
        return opensPinned(auth)
          ? Effect.flatMap(guard.argument("open", value), (p) => openPinned(auth, p, opts))
          : guard.refuse("fs:read", "open", value)
      }
      return Effect.flatMap(guard.argument("open", value), (p) =>
        openBound(
          {
            stat: (path) => isolated.stat(path),
            open: (o) => isolated.open(p, o),
            path: p,
            authorize: (action) => Effect.asVoid(auth.authorize([{ action, value: p }])),
            stale: (action) => auth.deny(action, p, "descriptor no longer names the resource at its authorized path")
          },
          opts
        )
      )
    })
  )

/**
 * @since 0.1.0
 * @internal
 */
export const stream =
  (guard: Guard): Method<"stream"> =>
  (value, raw) =>
    Stream.unwrap(
      Effect.fn("FileSystem.stream")(() =>
        Effect.flatMap(guard.options("stream", raw), (opts) =>
          guard.isolatedOne("fs:read", "stream", value, (host, p) => Effect.succeed(host.stream(p, opts)))
        )
      )()
    )

/**
 * @since 0.1.0
 * @internal
 */
export const sink =
  (guard: Guard): Method<"sink"> =>
  (value, raw) =>
    Sink.unwrap(
      Effect.fn("FileSystem.sink")(() =>
        Effect.flatMap(guard.options("sink", raw), (opts) =>
          guard.isolatedOne("fs:write", "sink", value, (host, p) => Effect.succeed(host.sink(p, opts)))
        )
      )()
    )
