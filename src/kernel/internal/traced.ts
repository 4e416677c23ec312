/**
 * A guarded method's span, at the price of the span alone.
 *
 * Every method of the guarded file system runs in a `FileSystem.<method>` span, as the client's
 * kernel's do. `Effect.fn(name)` gives that span and, on every call, also captures a stack trace and
 * installs a stack frame for defect reports: measured at about twice the cost of the span itself
 * (9 to 10 µs a call against 4 to 6 µs for `Effect.withSpan` without a captured trace, on this
 * project's machine), paid on every `stat`, `exists` and read. The methods a program calls most
 * take the span alone; the body still runs when the effect runs, not when it is built, as with
 * `Effect.fn`.
 *
 * @internal
 */
import { Effect } from "effect"

const spanOptions = { captureStackTrace: false } as const

/** `body` in a span named `name`, evaluated when the effect runs. @internal */
export const traced =
  <Args extends Array<unknown>, A, E, R>(name: string, body: (...args: Args) => Effect.Effect<A, E, R>) =>
  (...args: Args): Effect.Effect<A, E, R> =>
    Effect.withSpan(
      Effect.suspend(() => body(...args)),
      name,
      spanOptions
    )
