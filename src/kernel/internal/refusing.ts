/**
 * Refusals for what cannot be confined: every method of a kernel over a host without the atomic
 * extension, and single methods no executor request can express.
 *
 * @internal
 */
import { Effect, FileSystem, Sink, Stream, PlatformError } from "effect"
import { type Action, PermissionDenied, toPlatformError } from "../Permission.ts"
import { type MethodName, type MethodRow, methodNames, methods, subjectOf } from "./methods.ts"

/** What every such refusal says. @internal */
export const description = "host does not provide descriptor-relative, no-follow filesystem isolation"

/**
 * A guarded method the host cannot confine: a permission refusal (the kernel's own
 * `PermissionDenied` on the `cause`), naming the path as the caller gave it, normalized.
 *
 * @internal
 */
export const unavailable = (action: Action, method: string, resource: string): PlatformError.PlatformError =>
  toPlatformError({ method, error: new PermissionDenied({ capability: { action, resource }, reason: description }) })

/**
 * A confined view's refusal: no grant store is involved, so it is a plain `PermissionDenied`.
 *
 * @internal
 */
export const unconfined = (method: string, pathOrDescriptor: string): PlatformError.PlatformError =>
  PlatformError.systemError({ _tag: "PermissionDenied", module: "FileSystem", method, pathOrDescriptor, description })

/**
 * The kernel over a host it cannot confine: every method refuses, with the action the client's
 * kernel names for it and the path normalized against the workspace. Derived from the methods
 * table (`methods.ts`): its action, the argument naming its resource, and what it answers.
 *
 * @internal
 */
export const refusing = (normalize: (value: string) => string, systemTemp: string): FileSystem.FileSystem => {
  const no = (action: Action, method: string, value: unknown) =>
    Effect.suspend(() => Effect.fail(unavailable(action, method, typeof value === "string" ? normalize(value) : String(value))))
  const subject = (row: MethodRow<MethodName>, args: ReadonlyArray<unknown>): unknown => {
    if (row.subject === "temporary") return subjectOf(row.subject, args) ?? systemTemp
    if (row.subject !== "glob") return subjectOf(row.subject, args)
    const [pattern, options] = args as [unknown, { readonly root?: unknown } | undefined]
    return typeof options?.root === "string" ? `${normalize(options.root)}/${pattern}` : pattern
  }
  const table: Record<string, unknown> = {}
  for (const name of methodNames) {
    const row: MethodRow<MethodName> = methods[name]
    table[name] = (...args: ReadonlyArray<unknown>) => {
      const refusal = no(row.action, name, subject(row, args))
      return row.yields === "stream" ? Stream.unwrap(refusal) : row.yields === "sink" ? Sink.unwrap(refusal) : refusal
    }
  }
  return { ...FileSystem.make(table as never), ...table } as FileSystem.FileSystem
}
