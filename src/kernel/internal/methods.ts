/**
 * The kernel's one methods table: a row for every method of Effect's `FileSystem`, saying what it
 * is. The refusing layer, the grant-free confined view, the guarded file system and the isolated
 * volume's executor are each derived from these rows; only the irregular methods keep bodies of
 * their own in those layers.
 *
 * - A regular read or write is one executor request on the caller's first argument, normalized:
 *   the row builds that request from the normalized path and the other arguments, and says how an
 *   isolated volume performs the same request.
 * - An irregular method is anything else (two paths, a listing, a program over several requests,
 *   a handle, a stream). Its row still says the action a refusal names, which argument names its
 *   resource, and whether the confined view, which has no grant store, refuses it.
 *
 * @internal
 */
import type { Effect, FileSystem, PlatformError } from "effect"
import type { AtomicRequest, AtomicResults } from "../../protocol/wire.ts"
import type { Action } from "../Permission.ts"

/** Every method name of `FileSystem` (its type id is not a method). @internal */
export type MethodName = Exclude<Extract<keyof FileSystem.FileSystem, string>, `~${string}`>

type Rest<K extends MethodName> = FileSystem.FileSystem[K] extends (first: never, ...rest: infer A) => unknown ? A : never

type Request<O extends string> = Extract<AtomicRequest, { readonly operation: O }>

/** How an isolated volume answers the wire operation of the same name. @internal */
export type Volume<K extends string> = K extends keyof AtomicResults
  ? (fs: FileSystem.FileSystem, request: Request<K>) => Effect.Effect<AtomicResults[K], PlatformError.PlatformError>
  : never

/** What a refusal names as the method's resource: the first argument unless the row says otherwise. @internal */
export type Subject = "first" | "second" | "temporary" | "glob"

interface Common<K extends MethodName> {
  /** The action the client's kernel names for the method (the refusing layer's, and a regular method's check). */
  readonly action: Action
  readonly subject?: Subject | undefined
  /** What the method answers when it is not an effect: the refusal is wrapped to fit. */
  readonly yields?: "stream" | "sink" | undefined
  /** How an isolated volume performs the wire operation of the same name, when there is one. */
  readonly volume?: Volume<K> | undefined
}

/**
 * A regular method: one executor request.
 *
 * @internal
 */
export interface RegularRow<K extends MethodName> extends Common<K> {
  readonly kind: "regular"
  /** The request, on the normalized first argument and the rest of the caller's arguments. */
  readonly request: (normalized: string, ...rest: Rest<K>) => AtomicRequest
  /** A read that refuses every link it meets, so the authorizer may let it stand in for its second resolution. */
  readonly fused?: true | undefined
  /** The position among the rest of the arguments of an options object copied at the call. */
  readonly options?: 0 | 1 | undefined
}

/**
 * An irregular method: each layer writes its body, except that the confined view refuses it when
 * `confined` is `"refused"`.
 *
 * @internal
 */
export interface IrregularRow<K extends MethodName> extends Common<K> {
  readonly kind: "irregular"
  readonly confined?: "refused" | undefined
}

/** @internal */
export type MethodRow<K extends MethodName> = RegularRow<K> | IrregularRow<K>

/** The table's type: a method missing from it, or one too many, does not compile. @internal */
export type MethodsTable = { readonly [K in MethodName]: MethodRow<K> }

const read = "fs:read"
const write = "fs:write"

/** A regular read whose one operand is the normalized path (`fused`: see `RegularRow`). */
const pathRead = <K extends "readFile" | "readLink" | "realPath">(operation: K, volume: Volume<K>, fused?: true): RegularRow<K> => ({
  kind: "regular",
  action: read,
  ...(fused === undefined ? {} : { fused }),
  request: (path: string, ..._rest: Rest<K>) => ({ operation, path }) as Request<K>,
  volume
})

/**
 * The rows, one per `FileSystem` method, in Effect's order.
 *
 * @internal
 */
export const methods: MethodsTable = {
  access: { kind: "irregular", action: read, confined: "refused" },
  copy: { kind: "irregular", action: read, confined: "refused" },
  copyFile: { kind: "irregular", action: read, confined: "refused" },
  chmod: {
    kind: "regular",
    action: write,
    request: (path, mode) => ({ operation: "chmod", path, options: { mode } }) as Request<"chmod">,
    volume: (fs, r) => fs.chmod(r.path, r.options.mode)
  },
  chown: {
    kind: "regular",
    action: write,
    request: (path, uid, gid) => ({ operation: "chown", path, options: { uid, gid } }) as Request<"chown">,
    volume: (fs, r) => fs.chown(r.path, r.options.uid, r.options.gid)
  },
  exists: { kind: "irregular", action: read, volume: (fs, r) => fs.exists(r.path) },
  glob: {
    kind: "irregular",
    action: read,
    subject: "glob",
    volume: (fs, r) => fs.glob(r.pattern, { ...r.options, root: r.root })
  },
  link: { kind: "irregular", action: read, confined: "refused" },
  lstat: { kind: "irregular", action: read },
  makeDirectory: {
    kind: "regular",
    action: write,
    options: 0,
    request: (path, options) => ({ operation: "makeDirectory", path, options }) as Request<"makeDirectory">,
    volume: (fs, r) => fs.makeDirectory(r.path, r.options)
  },
  makeTempDirectory: { kind: "irregular", action: write, subject: "temporary", confined: "refused" },
  makeTempDirectoryScoped: { kind: "irregular", action: write, subject: "temporary", confined: "refused" },
  makeTempFile: { kind: "irregular", action: write, subject: "temporary", confined: "refused" },
  makeTempFileScoped: { kind: "irregular", action: write, subject: "temporary", confined: "refused" },
  open: { kind: "irregular", action: read, confined: "refused" },
  readDirectory: { kind: "irregular", action: read, volume: (fs, r) => fs.readDirectory(r.path, r.options) },
  readDirectoryEntries: { kind: "irregular", action: read },
  readFile: pathRead("readFile", (fs, r) => fs.readFile(r.path), true),
  readFileString: {
    kind: "regular",
    action: read,
    fused: true,
    request: (path, encoding) => ({ operation: "readFileString", path, encoding }) as Request<"readFileString">,
    volume: (fs, r) => fs.readFileString(r.path, r.encoding)
  },
  readLink: pathRead("readLink", (fs, r) => fs.readLink(r.path)),
  realPath: pathRead("realPath", (fs, r) => fs.realPath(r.path)),
  remove: { kind: "irregular", action: write, volume: (fs, r) => fs.remove(r.path, r.options) },
  rename: { kind: "irregular", action: write, volume: (fs, r) => fs.rename(r.from, r.to) },
  sink: { kind: "irregular", action: write, yields: "sink", confined: "refused" },
  stat: { kind: "irregular", action: read, volume: (fs, r) => fs.stat(r.path) },
  stream: { kind: "irregular", action: read, yields: "stream", confined: "refused" },
  symlink: { kind: "irregular", action: write, subject: "second", confined: "refused" },
  truncate: { kind: "irregular", action: write, confined: "refused" },
  utimes: { kind: "irregular", action: write, confined: "refused" },
  watch: { kind: "irregular", action: read, yields: "stream", confined: "refused" },
  writeFile: { kind: "irregular", action: write },
  writeFileString: {
    kind: "regular",
    action: write,
    options: 1,
    request: (path, data, options) => ({ operation: "writeFileString", path, data, options }) as Request<"writeFileString">,
    volume: (fs, r) => fs.writeFileString(r.path, r.data, r.options)
  }
}

/** The table's method names, in its order. @internal */
export const methodNames = Object.keys(methods) as ReadonlyArray<MethodName>

/** The caller's argument a refusal names, as the caller gave it (`undefined`: a temporary entry's default). @internal */
export const subjectOf = (subject: Subject | undefined, args: ReadonlyArray<unknown>): unknown => {
  switch (subject) {
    case "second":
      return args[1]
    case "temporary":
      return (args[0] as { readonly directory?: unknown } | undefined)?.directory
    default:
      return args[0]
  }
}

/**
 * A layer's hand-written body for an irregular method. A row without one is a bug of this build,
 * reported when the layer is made rather than when the method is first called.
 *
 * @internal
 */
export const irregularBody = (bodies: Partial<Record<MethodName, unknown>>, name: MethodName): unknown => {
  const body = Object.hasOwn(bodies, name) ? bodies[name] : undefined
  if (body === undefined) {
    // A defect of this build's source (the house test checks every layer), never a caller's input.
    throw new Error(`pinnedfs: the irregular method ${name} has no body in this layer`)
  }
  return body
}

/** A regular row's request builder, over arguments a layer has not typed. @internal */
export const requestOf =
  (row: RegularRow<MethodName>) =>
  (normalized: string, ...rest: ReadonlyArray<unknown>): AtomicRequest =>
    (row.request as (normalized: string, ...rest: ReadonlyArray<unknown>) => AtomicRequest)(normalized, ...rest)
