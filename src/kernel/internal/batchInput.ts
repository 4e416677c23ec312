/**
 * The shape of a batch, checked before anything is asked or sent. The batch as a whole must be an
 * array of 1 to `maxSize` members; a member that is malformed fails alone with `BadArgument`, as
 * the executors fail one, and is neither authorized nor executed.
 *
 * @internal
 */
import { type Path, type PlatformError, Result } from "effect"
import { badArgument } from "../../protocol/errors.ts"
import { batchReads, isOneOf } from "../../protocol/operations.ts"
import type { BatchEntry, BatchRequest } from "../FileSystemBatch.ts"
import { copyData } from "./snapshot.ts"

const isRead = isOneOf(batchReads)

const bad = (description: string) => Result.fail(badArgument("batch", description))

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const pathLike = (u: unknown, what: string): Result.Result<string, PlatformError.PlatformError> =>
  typeof u !== "string"
    ? bad(`${what} must be a string`)
    : u.includes("\0")
      ? bad(`${what} must not contain a NUL byte`)
      : Result.succeed(u)

/**
 * One member, checked (already a copy of plain data). Paths are returned as given; the caller
 * normalizes them. Plain checks, no generator: every member of every batch passes here.
 *
 * @internal
 */
export const checkMember = (u: unknown): Result.Result<BatchRequest, PlatformError.PlatformError> => {
  if (!isRecord(u)) return bad("a batch member must be an object")
  const operation = u.operation
  if (typeof operation !== "string" || !isRead(operation)) {
    return bad(`batch member operation '${String(operation).slice(0, 64)}' is not a read`)
  }
  const path = pathLike(u.path, operation === "glob" ? "a glob member's pattern (path)" : "a batch member's path")
  if (Result.isFailure(path)) return Result.fail(path.failure)
  if (operation === "readFileString" && u.encoding !== undefined && typeof u.encoding !== "string") {
    return bad("encoding must be a string")
  }
  if (operation === "readDirectory" || operation === "glob") {
    const options = u.options
    if (options !== undefined && !isRecord(options)) return bad("options must be an object")
    if (operation === "readDirectory" && options?.recursive !== undefined && typeof options.recursive !== "boolean") {
      return bad("recursive must be a boolean")
    }
    if (operation === "glob") {
      const root = pathLike(u.root, "a glob member's root")
      if (Result.isFailure(root)) return Result.fail(root.failure)
      const exclude = options?.exclude
      if (exclude !== undefined && (!Array.isArray(exclude) || exclude.some((e) => typeof e !== "string" || e.includes("\0")))) {
        return bad("exclude must be an array of strings without NUL bytes")
      }
    }
  }
  return Result.succeed(u as unknown as BatchRequest)
}

/** A well-formed member, normalized, with its index in the caller's batch. @internal */
export interface Member {
  readonly index: number
  readonly request: BatchRequest
}

/**
 * Copies and checks every member; normalizes the well-formed ones as the client frames them
 * (`normalize` reads a path against a base, the workspace root by default). A malformed member
 * becomes its failed entry; a missing or accessor slot fails the whole batch.
 *
 * @internal
 */
export const captureMembers = (
  requests: ReadonlyArray<unknown>,
  path: Path.Path,
  normalize: (value: string, base?: string) => string
): Result.Result<{ readonly failed: Array<BatchEntry>; readonly members: Array<Member> }, PlatformError.PlatformError> => {
  const failed: Array<BatchEntry> = []
  const members: Array<Member> = []
  for (let index = 0; index < requests.length; index++) {
    const slot = Object.getOwnPropertyDescriptor(requests, index)
    if (slot === undefined || !("value" in slot)) return bad(`batch member ${index} is missing or an accessor`)
    const copied = copyData(slot.value)
    const checked = Result.isFailure(copied) ? bad(copied.failure) : checkMember(copied.success)
    if (Result.isFailure(checked)) {
      const raw = (slot.value as { readonly path?: unknown } | null)?.path
      failed.push({ index, path: typeof raw === "string" ? raw : "", result: Result.fail(checked.failure) })
      continue
    }
    members.push({ index, request: normalized(checked.success, path, normalize) })
  }
  return Result.succeed({ failed, members })
}

const normalized = (request: BatchRequest, path: Path.Path, normalize: (value: string, base?: string) => string): BatchRequest => {
  if (request.operation !== "glob") return { ...request, path: normalize(request.path) }
  // A glob's pattern is read against its own root, itself read against the workspace root. An
  // exclude of the kind its pattern can never match (see `glob`) is not sent.
  const base = normalize(request.root)
  const absolute = path.isAbsolute(request.path)
  const exclude = request.options?.exclude
  return {
    ...request,
    root: base,
    path: normalize(request.path, base),
    ...(exclude === undefined ? {} : { options: { exclude: exclude.filter((e) => e.startsWith("/") === absolute) } })
  }
}
