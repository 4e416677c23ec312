/**
 * Requests arrive from a serialized boundary, so nothing about their shape is trusted: this module
 * checks every field at runtime and turns a well-formed wire request into the addon's request
 * (numeric operation, root-relative paths) plus the function that turns the addon's answer back
 * into the wire result. Anything malformed is a `BadArgument` here, before a root is pinned; a path
 * outside both roots is `PermissionDenied`.
 *
 * @since 0.1.0
 */
import { TextDecoder } from "node:util"
import { type PlatformError, Result } from "effect"
import type { Resolution as NativeResolution } from "../PinnedRoot.ts"
import { native, type NativeRequest } from "../internal/native.ts"
import { decodeText } from "../internal/text.ts"
import { PinnedFsError } from "../internal/errors.ts"
import { badArgument, fromNativeError, outsideRoots } from "../protocol/errors.ts"
import type { MkdirsResult, RmdirsResult } from "../protocol/extensions.ts"
import type { StatRecord } from "../internal/statRecord.ts"
import { fromNative as toFileInfo } from "../protocol/fileInfo.ts"
import { checkExclude, finishGlob, planGlob } from "./glob.ts"
import { executorOperations, executorReads, isOneOf } from "../protocol/operations.ts"
import { type OpRow, opTable } from "../protocol/opTable.ts"
import { type Root, rootIdentityPattern } from "../protocol/root.ts"
import { join, locate, rootOf } from "./roots.ts"

/**
 * The limits a request is checked against, and how its writes are made.
 *
 * @since 0.1.0
 * @category models
 */
export interface Limits {
  readonly batchSize: number
  readonly contentLimit: number
  /** Every write is fsynced (see `Options.durable`). */
  readonly durable: boolean
}

/**
 * One operation ready to run: the addon's request, the path to name in errors (as the caller
 * spelled it) and the conversion of the addon's answer into the wire result.
 *
 * @since 0.1.0
 * @category models
 */
export interface Planned {
  readonly operation: string
  readonly path: string
  readonly native: NativeRequest
  /** May throw a `PinnedFsError` (text too long for a string): a typed failure, see `settle`. */
  readonly finish: (value: unknown) => unknown
}

/**
 * The wire result of a planned operation's answer: `finish`'s value, or its `PinnedFsError` as a
 * `PlatformError`. Anything else `finish` throws is a defect and stays one.
 *
 * @since 0.1.0
 * @category decoding
 */
export const settle = (p: Pick<Planned, "operation" | "path" | "finish">, value: unknown): Check<unknown> => {
  try {
    return ok(p.finish(value))
  } catch (e) {
    if (!(e instanceof PinnedFsError)) throw e
    return fail(fromNativeError(e, p.operation, p.path))
  }
}

/**
 * A batch member: planned, or already failed (malformed members fail alone).
 *
 * @since 0.1.0
 * @category models
 */
export type Member =
  | { readonly ok: true; readonly planned: Planned }
  | { readonly ok: false; readonly path: string; readonly error: PlatformError.PlatformError }

/**
 * A decoded request.
 *
 * @since 0.1.0
 * @category models
 */
export type Decoded =
  | { readonly _tag: "Single"; readonly roots: Root; readonly planned: Planned }
  | { readonly _tag: "Batch"; readonly roots: Root; readonly members: ReadonlyArray<Member> }

type Fields = Readonly<Record<string, unknown>>
type Check<A> = Result.Result<A, PlatformError.PlatformError>

const ok = Result.succeed
const fail = Result.fail

/** A failure passed on unchanged: it holds no success value, so any success type fits it. */
const relay = <A>(failure: Result.Failure<unknown, PlatformError.PlatformError>): Check<A> => failure as Check<A>

const isObject = (u: unknown): u is Fields => typeof u === "object" && u !== null && !Array.isArray(u)

const kind = (u: unknown): string => (u === null ? "null" : Array.isArray(u) ? "array" : typeof u)

/** A directory's `dev:ino`, as `mkdirs` records and `rmdirs` checks ownership by. */
const identityPattern = /^[0-9]+:[0-9]+$/

/** An absolute path operand: a string, no NUL byte, starting with `/`. */
const absolute = (method: string, name: string, u: unknown): Check<string> => {
  if (typeof u !== "string") return fail(badArgument(method, `${name} must be a string, got ${kind(u)}`))
  if (u.includes("\0")) return fail(badArgument(method, `${name} contains a NUL byte`))
  if (!u.startsWith("/")) return fail(badArgument(method, `${name} must be absolute, got '${u.slice(0, 200)}'`))
  return ok(u)
}

/**
 * Validates the root triple.
 *
 * @since 0.1.0
 * @category validation
 */
export const decodeRoots = (method: string, request: Fields): Check<Root> => {
  // Plain checks, no generator: every request passes here, and a generator per field was a
  // measurable share of a single read's cost.
  const boundaryRoot = absolute(method, "boundaryRoot", request.boundaryRoot)
  if (Result.isFailure(boundaryRoot)) return relay(boundaryRoot)
  const logicalRoot = absolute(method, "logicalRoot", request.logicalRoot)
  if (Result.isFailure(logicalRoot)) return relay(logicalRoot)
  const rootIdentity = request.rootIdentity
  if (typeof rootIdentity !== "string" || (rootIdentity !== lastIdentity && !rootIdentityPattern.test(rootIdentity))) {
    return fail(badArgument(method, 'rootIdentity must be a root identity ("dev:ino", then ":b<birth>" or ":g<generation>")'))
  }
  lastIdentity = rootIdentity
  return ok({ boundaryRoot: boundaryRoot.success, logicalRoot: logicalRoot.success, rootIdentity })
}

/**
 * The last root identity that matched the pattern: a kernel sends the same one with every request,
 * and a string equal to one that matched matches too, so the pattern runs once per new identity.
 */
let lastIdentity: string | undefined

/** An absolute path inside the roots: the addon's root-relative spelling of it, and the root it used. */
interface Inside {
  readonly abs: string
  readonly rel: string
  readonly root: string
}

const inside = (roots: Root, method: string, name: string, u: unknown): Check<Inside> => {
  const checked = absolute(method, name, u)
  if (Result.isFailure(checked)) return relay(checked)
  const abs = checked.success
  const located = locate(roots, abs)
  return located === undefined ? fail(outsideRoots(method, abs)) : ok({ abs, rel: located.relative, root: rootOf(roots, located.spelling) })
}

const optionsOf = (method: string, u: unknown, required = false): Check<Fields> => {
  if (u === undefined || u === null) {
    return required ? fail(badArgument(method, "options are required")) : ok({})
  }
  return isObject(u) ? ok(u) : fail(badArgument(method, `options must be an object, got ${kind(u)}`))
}

const flagOf = (method: string, options: Fields, name: string): Check<boolean> => {
  const u = options[name]
  if (u === undefined || u === null) return ok(false)
  return typeof u === "boolean" ? ok(u) : fail(badArgument(method, `${name} must be a boolean, got ${kind(u)}`))
}

const modeOf = (method: string, u: unknown, required = false): Check<number | undefined> => {
  if (u === undefined || u === null) {
    return required ? fail(badArgument(method, "mode is required")) : ok(undefined)
  }
  return typeof u === "number" && Number.isInteger(u) && u >= 0 && u <= 0o7777
    ? ok(u)
    : fail(badArgument(method, "mode must be an integer permission mode between 0 and 0o7777"))
}

const idOf = (method: string, name: string, u: unknown): Check<number> =>
  typeof u === "number" && Number.isInteger(u) && u >= -1 && u <= 0xfffffffe
    ? ok(u)
    : fail(badArgument(method, `${name} must be an integer between -1 and 4294967294`))

const decoderOf = (method: string, u: unknown): Check<TextDecoder> => {
  if (u !== undefined && u !== null && typeof u !== "string") {
    return fail(badArgument(method, `encoding must be a string, got ${kind(u)}`))
  }
  // As Effect's FileSystem.make: `new TextDecoder(encoding)`, so invalid bytes become U+FFFD. A
  // non-streaming decoder keeps no state between calls, so one per label serves every request.
  const label = u ?? ""
  const known = decoders.get(label)
  if (known !== undefined) return ok(known)
  let made: TextDecoder
  try {
    made = new TextDecoder(u ?? undefined)
  } catch (cause) {
    return fail(badArgument(method, `invalid encoding '${String(u)}'`, cause))
  }
  // Only labels the constructor accepted are kept, and WHATWG defines a few hundred: bounded anyway.
  if (decoders.size < 512) decoders.set(label, made)
  return ok(made)
}

const decoders = new Map<string, TextDecoder>()

const openFlags = native.flags as Readonly<Record<string, number>>

const writeOptionsOf = (method: string, u: unknown): Check<{ flag: number; mode: number | undefined }> =>
  Result.gen(function* () {
    const options = yield* optionsOf(method, u)
    const name = options.flag ?? "w"
    if (typeof name !== "string" || !Object.hasOwn(openFlags, name)) {
      return yield* fail(badArgument(method, `unknown open flag '${String(name)}'`))
    }
    const mode = yield* modeOf(method, options.mode)
    return { flag: openFlags[name]!, mode }
  })

/**
 * Strict standard base64 (RFC 4648, padded), the kernel's encoding. Only the checks that need no
 * pass over the text run here: the type, the length, and the size the bytes would have, so an
 * oversized payload is refused before anything is copied. The alphabet and the padding are checked
 * by the worker as it decodes (the addon copies the text as UTF-8, so a character outside ASCII
 * becomes bytes it refuses), before anything is opened: an invalid payload is the same
 * `BadArgument` ("data is not valid base64") as ever, and writes nothing. Scanning and decoding an
 * 89-million-character payload on this thread cost seconds.
 */
const base64Of = (method: string, u: unknown, limit: number): Check<string> => {
  if (typeof u !== "string") return fail(badArgument(method, `data must be a base64 string, got ${kind(u)}`))
  if (u.length % 4 !== 0) return fail(badArgument(method, "data is not valid base64"))
  const padding = u.endsWith("==") ? 2 : u.endsWith("=") ? 1 : 0
  const size = (u.length / 4) * 3 - padding
  if (size > limit) {
    return fail(badArgument(method, `${method} payload of ${size} bytes exceeds the ${limit} byte content limit`))
  }
  return ok(u)
}

const encoder = new TextEncoder()

const ops = native.ops

const same = (value: unknown): unknown => value
const nothing = (): undefined => undefined

/** Builds a planned operation. */
const planned = (operation: string, path: string, request: NativeRequest, finish: (value: unknown) => unknown = same): Planned => ({
  operation,
  path,
  native: request,
  finish
})

const isRead = isOneOf(executorReads)

/** A wire name's row in the operation table, and whether the name is the row's `<name>String` form. */
interface WireRow {
  readonly row: OpRow
  readonly text: boolean
}

/** Every wire name an executor answers, with its row: what the operand-kind decoders work from. */
const wireRows: ReadonlyMap<string, WireRow> = new Map(
  opTable
    .filter((row) => executorOperations.includes(row.name as never))
    .flatMap(
      (row): Array<[string, WireRow]> =>
        row.text
          ? [
              [row.name, { row, text: false }],
              [`${row.name}String`, { row, text: true }]
            ]
          : [[row.name, { row, text: false }]]
    )
)

type OptionCheck = (method: string, u: unknown, required: boolean) => Check<unknown>

/**
 * The options a path operation may carry, each checked one way for every operation and handed to
 * the addon under its own name when given, so an operation whose options are among these decodes
 * with no code of its own. An option a row's operation does not use is checked and then ignored by
 * the core, as an unknown one is.
 */
const optionChecks: ReadonlyArray<readonly [string, OptionCheck]> = [
  ["recursive", (method, u) => flagOf(method, { recursive: u }, "recursive")],
  ["force", (method, u) => flagOf(method, { force: u }, "force")],
  ["mode", (method, u, required) => modeOf(method, u, required)],
  ["uid", (method, u) => idOf(method, "uid", u)],
  ["gid", (method, u) => idOf(method, "gid", u)]
]

/** The options an operation cannot do without: its `options` object is then required too. */
const requiredOptions: Readonly<Record<string, ReadonlyArray<string>>> = { chmod: ["mode"], chown: ["uid", "gid"] }

/** No options given: one answer shared by every request that has none (nothing writes to it). */
const noFields: Check<Fields> = ok(Object.freeze({}))

/** The addon's fields for a request's `options`, given ones only (a read keeps its compact form). */
const optionFieldsOf = (operation: string, u: unknown): Check<Fields> => {
  const required = requiredOptions[operation]
  if (u === undefined && required === undefined) return noFields
  const options = optionsOf(operation, u, required !== undefined)
  if (Result.isFailure(options)) return relay(options)
  const fields: Record<string, unknown> = {}
  for (const [name, check] of optionChecks) {
    const need = required?.includes(name) === true
    const given = options.success[name]
    if (given === undefined && !need) continue
    const checked = check(operation, given, need)
    if (Result.isFailure(checked)) return relay(checked)
    if (checked.success !== undefined) fields[name] = checked.success
  }
  return ok(fields)
}

/**
 * The answers that are not the addon's value as it is (a path read's value, a change's nothing):
 * the rows whose wire result is spelled otherwise.
 */
const answers: Readonly<Record<string, (roots: Root) => (value: unknown) => unknown>> = {
  stat: () => (v) => toFileInfo(v as StatRecord),
  // Node's realpath answers the canonical path: the boundary spelling.
  realPath: (roots) => (v) => join(roots.boundaryRoot, v as string),
  // The kernel checks `isInside(boundaryRoot, resolution.path)`: answer in boundary spelling.
  resolve: (roots) => (v) => {
    const r = v as NativeResolution
    return { path: join(roots.boundaryRoot, r.path), target: r.target }
  }
}

const answerOf = (roots: Root, wire: WireRow): ((value: unknown) => unknown) =>
  answers[wire.row.name]?.(roots) ?? (wire.row.effect === "Write" ? nothing : same)

/**
 * A `Path` row: one path and its options. Plain checks, no generator: every read and both of
 * authorization's resolves pass here. A text form decodes the bytes with the request's `encoding`.
 */
const decodePath = (roots: Root, operation: string, wire: WireRow, request: Fields): Check<Planned> => {
  const located = inside(roots, operation, "path", request.path)
  if (Result.isFailure(located)) return relay(located)
  const { abs, rel } = located.success
  const fields = optionFieldsOf(operation, request.options)
  if (Result.isFailure(fields)) return relay(fields)
  const op = ops[wire.row.name]!
  const native = (fields === noFields ? { op, path: rel } : { op, path: rel, ...fields.success }) as NativeRequest
  if (!wire.text) return ok(planned(operation, abs, native, answerOf(roots, wire)))
  const decoder = decoderOf(operation, request.encoding)
  if (Result.isFailure(decoder)) return relay(decoder)
  const d = decoder.success
  return ok(planned(operation, abs, native, (v) => decodeText(d, v as Uint8Array, abs)))
}

/** A `PathTo` row: `from` and its destination `to`, and its options. */
const decodePathTo = (roots: Root, operation: string, wire: WireRow, request: Fields): Check<Planned> =>
  Result.gen(function* () {
    const from = yield* inside(roots, operation, "from", request.from)
    const to = yield* inside(roots, operation, "to", request.to)
    const fields = yield* optionFieldsOf(operation, request.options)
    const native = { op: ops[wire.row.name], path: from.rel, to: to.rel, ...fields } as NativeRequest
    return planned(operation, from.abs, native, answerOf(roots, wire))
  })

/** `glob`, given its pattern (the wire's `pattern`, or `path` in a batch member). */
const decodeGlob = (roots: Root, pattern: unknown, request: Fields): Check<Planned> =>
  Result.gen(function* () {
    const method = "glob"
    const p = yield* absolute(method, "pattern", pattern)
    const r = request.root
    if (typeof r !== "string" || r.includes("\0")) {
      return yield* fail(badArgument(method, `root must be a string without NUL bytes, got ${kind(r)}`))
    }
    const exclude = yield* checkExclude(method, request.options)
    const g = yield* planGlob(roots, method, p, r, exclude)
    if (g.pattern === "") {
      // The pattern names the pinned root itself: Effect answers it, a literal that exists.
      return planned(method, p, { op: ops.exists, path: "" }, (v) => (v === true ? [p] : []))
    }
    return planned(method, p, { op: ops.glob, path: "", to: g.to, pattern: g.pattern, exclude: g.exclude, dot: false }, (v) =>
      finishGlob(g, v as ReadonlyArray<string>)
    )
  })

/**
 * `mkdirs` / `rmdirs` answers name directories root-relative: give each back as requested, and an
 * ancestor the program added itself in the spelling of the first member.
 */
class Spellings {
  private readonly requested = new Map<string, string>()
  private root: string | undefined

  constructor(private readonly fallback: string) {}

  add(path: Inside): void {
    this.requested.set(path.rel, path.abs)
    this.root ??= path.root
  }

  /** The first member's absolute path: what a failure of the whole program names. */
  get first(): string {
    return this.requested.values().next().value ?? this.fallback
  }

  of(rel: string): string {
    return this.requested.get(rel) ?? join(this.root ?? this.fallback, rel)
  }
}

const errorPath = (u: unknown): string | undefined =>
  typeof u === "object" && u !== null && typeof (u as { path?: unknown }).path === "string" ? (u as { path: string }).path : undefined

type RmdirStatus = RmdirsResult["members"][number]["status"]

const decodeMkdirs = (roots: Root, request: Fields): Check<Planned> =>
  Result.gen(function* () {
    const method = "mkdirs"
    if (!Array.isArray(request.plan)) return yield* fail(badArgument(method, "plan must be an array"))
    const plan: Array<{ path: string; mode?: number }> = []
    const spellings = new Spellings(roots.logicalRoot)
    for (const member of request.plan as ReadonlyArray<unknown>) {
      if (!isObject(member)) return yield* fail(badArgument(method, "plan member must be an object"))
      const path = yield* inside(roots, method, "plan member path", member.path)
      const mode = yield* modeOf(method, member.mode)
      spellings.add(path)
      plan.push({ path: path.rel, ...(mode === undefined ? {} : { mode }) })
    }
    return planned(method, spellings.first, { op: ops.mkdirs, plan }, (v): MkdirsResult => {
      const out = v as { created: ReadonlyArray<{ path: string; identity: string }>; error: unknown }
      const failed = errorPath(out.error)
      const where = failed === undefined || failed === "" ? spellings.first : spellings.of(failed)
      return {
        created: out.created.map((c) => ({ path: spellings.of(c.path), identity: c.identity })),
        error: out.error === null ? null : fromNativeError(out.error, method, where)
      }
    })
  })

const decodeRmdirs = (roots: Root, request: Fields): Check<Planned> =>
  Result.gen(function* () {
    const method = "rmdirs"
    if (!Array.isArray(request.owned)) return yield* fail(badArgument(method, "owned must be an array"))
    const owned: Array<{ path: string; identity: string; optional: boolean }> = []
    const spellings = new Spellings(roots.logicalRoot)
    for (const member of request.owned as ReadonlyArray<unknown>) {
      if (!isObject(member)) return yield* fail(badArgument(method, "owned member must be an object"))
      const path = yield* inside(roots, method, "owned member path", member.path)
      if (typeof member.identity !== "string" || !identityPattern.test(member.identity)) {
        return yield* fail(badArgument(method, 'owned member identity must be a "dev:ino" string of decimal digits'))
      }
      const optional = yield* flagOf(method, member, "optional")
      spellings.add(path)
      owned.push({ path: path.rel, identity: member.identity, optional })
    }
    return planned(method, spellings.first, { op: ops.rmdirs, owned }, (v): RmdirsResult => {
      const out = v as {
        members: ReadonlyArray<{ path: string; status: RmdirStatus; error: unknown }>
        stopped: boolean
      }
      return {
        stopped: out.stopped,
        members: out.members.map((m) => {
          const path = spellings.of(m.path)
          return { path, status: m.status, error: m.error === null ? null : fromNativeError(m.error, method, path) }
        })
      }
    })
  })

/**
 * A string payload bounded like a base64 one, in the bytes it becomes. Every UTF-16 unit encodes to
 * at least one byte, so a string longer than the limit is refused before anything is encoded.
 */
const utf8Of = (method: string, u: string, limit: number): Check<Uint8Array> => {
  const over = (size: string) => fail(badArgument(method, `${method} payload of ${size} bytes exceeds the ${limit} byte content limit`))
  if (u.length > limit) return over(`at least ${u.length}`)
  // Effect's writeFileString encodes with TextEncoder (lone surrogates become U+FFFD).
  const bytes = encoder.encode(u)
  return bytes.byteLength > limit ? over(String(bytes.byteLength)) : ok(bytes)
}

/**
 * A `Data` row: one path, its payload (base64 on the wire; text in the `<name>String` form) and
 * its write options.
 */
const decodeData = (roots: Root, operation: string, wire: WireRow, request: Fields, limits: Limits): Check<Planned> =>
  Result.gen(function* () {
    const { abs, rel } = yield* inside(roots, operation, "path", request.path)
    const { flag, mode } = yield* writeOptionsOf(operation, request.options)
    let data: Uint8Array | string
    const base64 = !wire.text
    if (base64) {
      data = yield* base64Of(operation, request.data, limits.contentLimit)
    } else if (typeof request.data === "string") {
      data = yield* utf8Of(operation, request.data, limits.contentLimit)
    } else {
      return yield* fail(badArgument(operation, `data must be a string, got ${kind(request.data)}`))
    }
    const native: NativeRequest = {
      op: ops[wire.row.name],
      path: rel,
      data,
      base64,
      flag,
      // A whole-file flag replaces the file through a temporary (the core's default): every
      // kernel write is crash-safe.
      durable: limits.durable,
      ...(mode === undefined ? {} : { mode })
    }
    return planned(operation, abs, native, answerOf(roots, wire))
  })

/** One request, by its row's operand kind: a regular row needs no decoder of its own. */
const decodeOne = (roots: Root, operation: string, request: Fields, limits: Limits): Check<Planned> => {
  const wire = wireRows.get(operation)
  switch (wire?.row.operand) {
    case "Path":
      return decodePath(roots, operation, wire, request)
    case "PathTo":
      return decodePathTo(roots, operation, wire, request)
    case "Data":
      return decodeData(roots, operation, wire, request, limits)
    case "Glob":
      return decodeGlob(roots, request.pattern, request)
    case "Plan":
      return decodeMkdirs(roots, request)
    case "Owned":
      return decodeRmdirs(roots, request)
    default:
      return fail(badArgument("execute", `unknown operation '${operation.slice(0, 100)}'`))
  }
}

const knownOperations: ReadonlySet<string> = new Set(executorOperations)

/** A batch member: a read, `resolve`, or a glob (pinnedfs extension, see `extensions.ts`). */
const decodeMember = (roots: Root, u: unknown): Member => {
  const path = isObject(u) && typeof u.path === "string" ? u.path : ""
  if (!isObject(u)) {
    return { ok: false, path, error: badArgument("batch", `batch member must be an object, got ${kind(u)}`) }
  }
  const operation = u.operation
  const one =
    operation === "glob"
      ? decodeGlob(roots, u.path, u)
      : isRead(operation)
        ? decodePath(roots, operation, wireRows.get(operation)!, u)
        : fail(badArgument("batch", `batch member operation '${String(operation).slice(0, 100)}' is not a read`))
  if (Result.isFailure(one)) return { ok: false, path, error: one.failure }
  const p = one.success
  const finish =
    operation === "resolve" ? (v: unknown) => ({ operation, resolution: p.finish(v) }) : (v: unknown) => ({ operation, value: p.finish(v) })
  return { ok: true, planned: { ...p, finish } }
}

/**
 * Decodes a wire request (or a pinnedfs extension request).
 *
 * Batches: a batch that is not an array, or has more members than `batchSize`, fails as a whole
 * with `BadArgument`; a malformed member (not an object, not a read, bad path, bad encoding) fails
 * alone with `BadArgument`, and a member outside both roots alone with `PermissionDenied`, as one
 * missing file fails alone.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeRequest = (u: unknown, limits: Limits): Check<Decoded> => {
  if (!isObject(u)) return fail(badArgument("execute", `request must be an object, got ${kind(u)}`))
  const operation = u.operation
  if (typeof operation !== "string") {
    return fail(badArgument("execute", `request operation must be a string, got ${kind(operation)}`))
  }
  const decodedRoots = decodeRoots(knownOperations.has(operation) ? operation : "execute", u)
  if (Result.isFailure(decodedRoots)) return relay(decodedRoots)
  const roots = decodedRoots.success
  if (isRead(operation)) {
    // The hot path (every read, and both of authorization's resolves) without a generator.
    const one = decodePath(roots, operation, wireRows.get(operation)!, u)
    return Result.isFailure(one) ? relay(one) : ok({ _tag: "Single", roots, planned: one.success })
  }
  return Result.gen(function* () {
    if (operation !== "batch") {
      return { _tag: "Single", roots, planned: yield* decodeOne(roots, operation, u, limits) } as const
    }
    const requests = u.requests
    if (!Array.isArray(requests)) return yield* fail(badArgument("batch", "batch requests must be an array"))
    if (requests.length > limits.batchSize) {
      return yield* fail(badArgument("batch", `batch of ${requests.length} members exceeds the limit of ${limits.batchSize}`))
    }
    return { _tag: "Batch", roots, members: requests.map((m: unknown) => decodeMember(roots, m)) } as const
  })
}
