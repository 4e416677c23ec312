/**
 * One function per wire operation, each the way path-based code does it: {@link walk} checks the
 * path component by component, then the same path goes to an ordinary `node:fs` call. Every
 * function is check-then-use by construction; see `PathAtomicFileSystem.ts` for what that costs.
 *
 * @internal
 */
import * as fsp from "node:fs/promises"
import * as nodePath from "node:path"
import { TextDecoder } from "node:util"
import type { Resolution } from "../protocol/wire.ts"
import {
  descend,
  found,
  gap,
  type Lexed,
  lex,
  noHardLink,
  noLink,
  regularOrDirectory,
  type RootWithWindow,
  walk,
  type Walked
} from "./confine.ts"
import { badArgumentFailure, refuse, sysError } from "./failure.ts"
import { fromNodeStats as fileInfo } from "../protocol/fileInfo.ts"
import { replace } from "./replace.ts"

/**
 * A recursive listing that never descends through a link. Not `fs.readdir(…, { recursive: true })`:
 * Node 20's version follows a link to a directory and lists what it names, outside the root.
 */
const listRecursive = async (top: string, shown: string): Promise<Array<string>> => {
  const out: Array<string> = []
  const pending: Array<{ rel: string; depth: number }> = [{ rel: "", depth: 0 }]
  while (pending.length > 0) {
    const { rel, depth } = pending.shift()!
    const dir = rel === "" ? top : nodePath.join(top, rel)
    for (const entry of await fsp.readdir(dir, { withFileTypes: true })) {
      const name = rel === "" ? entry.name : `${rel}/${entry.name}`
      out.push(name)
      // d_type is a hint: an unknown type is asked again, without following.
      const isDirectory =
        entry.isDirectory() || (!entry.isSymbolicLink() && !entry.isFile() && (await fsp.lstat(nodePath.join(top, name))).isDirectory())
      if (!isDirectory) continue
      // The same bound as the native listing, so both answer the same tree the same way.
      if (depth + 1 > maxListingDepth) {
        // The native listing's refusal exactly: toolarge (BadArgument), ENAMETOOLONG.
        throw refuse(
          "toolarge",
          "ENAMETOOLONG",
          "scandir",
          shown,
          `directory tree is deeper than the recursive listing limit of ${maxListingDepth} levels`
        )
      }
      pending.push({ rel: name, depth: depth + 1 })
    }
  }
  // Sorted whole, byte by byte, as the native listing answers (Node sorts each flat listing so).
  return out.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
}

const maxListingDepth = 256

/** Per-call context: the batch answer budget a read may still spend, when in a batch. @internal */
export interface Budget {
  remaining: number
}

type Fields = Record<string, unknown>

const optionsOf = (request: Fields): Fields => {
  const options = request.options
  if (options === undefined || options === null) return {}
  if (typeof options !== "object" || Array.isArray(options)) throw badArgumentFailure("options must be an object")
  return options as Fields
}

const flagOf = (value: unknown): boolean => {
  if (value === undefined) return false
  if (typeof value !== "boolean") throw badArgumentFailure("option must be a boolean")
  return value
}

const modeOf = (value: unknown, fallback: number | undefined): number | undefined => {
  if (value === undefined) return fallback
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > 0o7777) {
    throw badArgumentFailure("mode must be an integer permission mode between 0 and 0o7777")
  }
  return value
}

const idOf = (value: unknown, name: string): number => {
  if (typeof value !== "number" || !Number.isInteger(value) || value < -1 || value > 0xfffffffe) {
    throw badArgumentFailure(`${name} must be an integer between -1 and 4294967294`)
  }
  return value
}

// Strict: Node's own decoder skips what it does not understand, which would write other bytes.
const base64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

const openFlags = new Set(["r", "r+", "w", "wx", "w+", "wx+", "a", "ax", "a+", "ax+"])

/**
 * The on-disk spelling of a checked path. Only macOS can differ from the request here (a
 * case-insensitive volume): there `realpath(3)` reports the stored names, and the walk has just
 * checked that no component is a link for it to follow. Linux `realpath(3)` never changes case, so
 * the requested spelling is the on-disk one as far as a path-based program can tell.
 */
const spelled = async (root: RootWithWindow, parts: ReadonlyArray<string>, existing = parts.length): Promise<string> => {
  const joined = nodePath.join(root.boundaryRoot, ...parts)
  if (process.platform !== "darwin" || existing === 0) return joined
  const head = await fsp.realpath(nodePath.join(root.boundaryRoot, ...parts.slice(0, existing)))
  const base = await fsp.realpath(root.boundaryRoot)
  const rel = nodePath.relative(base, head)
  if (rel.startsWith("..") || nodePath.isAbsolute(rel)) return joined
  return nodePath.join(root.boundaryRoot, rel, ...parts.slice(existing))
}

const located = async (
  root: RootWithWindow,
  request: Fields,
  key = "path",
  leafIsUse = false
): Promise<{ lexed: Lexed; walked: Walked }> => {
  const lexed = lex(root, request[key], key)
  return { lexed, walked: await walk(root, lexed, leafIsUse) }
}

/** Reads a file's bytes after the checks every read makes; shared by the readFile family. */
const readBytes = async (root: RootWithWindow, request: Fields, budget: Budget | undefined): Promise<Uint8Array> => {
  const { lexed, walked } = await located(root, request)
  const w = found(lexed, walked)
  noLink(lexed, w)
  if (w.stat.isDirectory()) throw sysError("EISDIR", "read", lexed.shown)
  regularOrDirectory(lexed, w.stat, "open")
  noHardLink(lexed, w.stat, "open")
  const tooLarge = (size: number | bigint) =>
    refuse("toolarge", "EFBIG", "read", lexed.shown, `file of ${size} bytes exceeds the remaining ${budget!.remaining}-byte answer budget`)
  if (budget !== undefined && w.stat.size > BigInt(budget.remaining)) throw tooLarge(w.stat.size)
  await gap(root)
  const buffer = await fsp.readFile(w.path)
  if (budget !== undefined) {
    if (buffer.byteLength > budget.remaining) throw tooLarge(buffer.byteLength)
    budget.remaining -= buffer.byteLength
  }
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
}

const decoderFor = (encoding: unknown): TextDecoder => {
  if (encoding !== undefined && typeof encoding !== "string") throw badArgumentFailure("encoding must be a string")
  try {
    return new TextDecoder(encoding)
  } catch {
    throw badArgumentFailure("invalid encoding", String(encoding))
  }
}

/** What a write needs to know beyond its request: the payload bound and whether to fsync. @internal */
export interface Writes {
  readonly contentLimit: number
  readonly durable: boolean
}

const wholeFileFlags = new Set(["w", "w+", "wx", "wx+"])

const write = async (root: RootWithWindow, request: Fields, data: Uint8Array, writes: Writes): Promise<void> => {
  const { contentLimit } = writes
  if (data.byteLength > contentLimit) {
    throw badArgumentFailure(`writeFile payload of ${data.byteLength} bytes exceeds the ${contentLimit} byte limit`)
  }
  const options = optionsOf(request)
  const flag = options.flag ?? "w"
  if (typeof flag !== "string" || !openFlags.has(flag)) throw badArgumentFailure(`unknown open flag '${String(flag)}'`)
  const mode = modeOf(options.mode, undefined)
  const exclusive = flag === "wx" || flag === "wx+"
  const { lexed, walked } = await located(root, request)
  if (walked.kind === "found") {
    // wx answers what open(O_CREAT|O_EXCL) answers for anything at the name, a link included.
    if (exclusive) throw sysError("EEXIST", "open", lexed.shown)
    noLink(lexed, walked)
    if (walked.stat.isDirectory()) throw sysError("EISDIR", "open", lexed.shown)
    regularOrDirectory(lexed, walked.stat, "open")
    noHardLink(lexed, walked.stat, "open")
  } else if (walked.code !== "ENOENT" || walked.at !== walked.parts.length - 1 || lexed.mustBeDir) {
    // "newname/" asks for a directory that is not there: no file is created under its name.
    throw sysError(walked.code, "lstat", lexed.shown)
  }
  await gap(root)
  if (wholeFileFlags.has(flag)) {
    const existing = walked.kind === "found" ? walked.stat : undefined
    if ((await replace(walked.path, data, { exclusive, mode, durable: writes.durable }, existing)) === "done") return
  }
  await fsp.writeFile(walked.path, data, mode === undefined ? { flag } : { flag, mode })
  if (writes.durable) {
    const handle = await fsp.open(walked.path, "r+")
    await handle.sync().finally(() => handle.close())
  }
}

const makeDirectory = async (root: RootWithWindow, request: Fields): Promise<void> => {
  const options = optionsOf(request)
  const recursive = flagOf(options.recursive)
  const mode = modeOf(options.mode, 0o777)
  const { lexed, walked } = await located(root, request)
  if (walked.kind === "found") {
    if (recursive && walked.stat.isDirectory()) return
    noLink(lexed, walked)
    throw sysError("EEXIST", "mkdir", lexed.shown)
  }
  if (walked.code === "ENOTDIR") throw sysError("ENOTDIR", "mkdir", lexed.shown)
  if (!recursive && walked.at !== walked.parts.length - 1) throw sysError("ENOENT", "mkdir", lexed.shown)
  await gap(root)
  for (let i = walked.at; i < walked.parts.length; i++) {
    const p = nodePath.join(root.boundaryRoot, ...walked.parts.slice(0, i + 1))
    // Someone else may create the same directory meanwhile: that is fine unless it is not one.
    await fsp.mkdir(p, { mode }).catch(async (e: NodeJS.ErrnoException) => {
      if (e.code !== "EEXIST" || !recursive) throw e
      const st = await fsp.lstat(p)
      if (st.isSymbolicLink()) {
        throw refuse("symlink", "ELOOP", "mkdir", lexed.shown, `path component '${walked.parts[i]}' is a symbolic link`)
      }
      if (!st.isDirectory()) throw e
    })
  }
}

const remove = async (root: RootWithWindow, request: Fields): Promise<void> => {
  const options = optionsOf(request)
  const recursive = flagOf(options.recursive)
  const force = flagOf(options.force)
  const { lexed, walked } = await located(root, request)
  if (walked.parts.length === 0) throw badArgumentFailure("the root itself cannot be removed", lexed.shown)
  if (walked.kind === "missing") {
    if (force && walked.code === "ENOENT") return
    throw sysError(walked.code, "lstat", lexed.shown)
  }
  if (walked.stat.isDirectory()) {
    // Effect's Node `remove` is `fs.rm`, which refuses a directory without `recursive`.
    if (!recursive) throw sysError("EISDIR", "rm", lexed.shown)
    await gap(root)
    await fsp.rm(walked.path, { recursive: true, force })
    return
  }
  // A file or a link: the entry itself goes, whatever else names the inode.
  await gap(root)
  await fsp.unlink(walked.path)
}

const rename = async (root: RootWithWindow, request: Fields): Promise<void> => {
  const from = await located(root, request, "from")
  const to = await located(root, request, "to")
  if (from.walked.parts.length === 0 || to.walked.parts.length === 0) {
    throw badArgumentFailure("the root itself cannot be renamed", from.lexed.shown)
  }
  found(from.lexed, from.walked)
  if (to.walked.kind === "missing" && (to.walked.code !== "ENOENT" || to.walked.at !== to.walked.parts.length - 1)) {
    throw sysError(to.walked.code, "lstat", to.lexed.shown)
  }
  await gap(root)
  await fsp.rename(from.walked.path, to.walked.path)
}

/** The checks before a metadata change: no link, no hard link. */
const settable = async (root: RootWithWindow, request: Fields, syscall: string): Promise<string> => {
  const { lexed, walked } = await located(root, request)
  const w = found(lexed, walked)
  noLink(lexed, w)
  noHardLink(lexed, w.stat, syscall)
  await gap(root)
  return w.path
}

/**
 * Walks from the root without following anything and answers where it stopped: at the first link
 * (its path and text), or the whole request (existing names in on-disk spelling, a missing name and
 * what follows as requested). In boundary spelling, as the kernel maps its answers.
 */
const resolve = async (root: RootWithWindow, request: Fields): Promise<Resolution> => {
  const lexed = lex(root, request.path)
  const parts: Array<string> = []
  const { steps } = lexed
  for (const i of descend(steps, parts)) {
    const step = steps[i]!
    const p = nodePath.join(root.boundaryRoot, ...parts)
    const st = await fsp.lstat(p).catch((e: NodeJS.ErrnoException) => {
      if (e.code === "ENOENT") return undefined
      throw sysError(e.code ?? "EUNKNOWN", "lstat", lexed.shown, e)
    })
    if (st === undefined) {
      const rest = steps.slice(i + 1)
      if (rest.includes("..")) throw sysError("ENOENT", "lstat", lexed.shown)
      return { path: await spelled(root, [...parts, ...rest], parts.length - 1), target: null }
    }
    if (st.isSymbolicLink()) {
      // A `..` returns only to a real directory (as the native executor resolves it), so a link
      // that a later `..` would climb back out of is refused rather than answered.
      if (steps.indexOf("..", i + 1) !== -1) {
        throw refuse("symlink", "ELOOP", "lstat", lexed.shown, `path component '${step}' is a symbolic link`)
      }
      const target = await fsp.readlink(p)
      return { path: await spelled(root, parts, parts.length - 1), target }
    }
    if (i < steps.length - 1 && !st.isDirectory()) throw sysError("ENOTDIR", "lstat", lexed.shown)
  }
  if (lexed.mustBeDir && parts.length > 0) {
    const st = await fsp.lstat(nodePath.join(root.boundaryRoot, ...parts))
    if (!st.isDirectory()) throw sysError("ENOTDIR", "lstat", lexed.shown)
  }
  return { path: await spelled(root, parts), target: null }
}

/** The operations every executor call and batch member dispatches to. @internal */
export const operations = {
  exists: async (root: RootWithWindow, request: Fields): Promise<boolean> => {
    const lexed = lex(root, request.path)
    const walked = await walk(root, lexed, true)
    if (walked.kind === "found") return true
    // As Effect's exists: only "not there" is false; "file/x" (ENOTDIR) is an error.
    if (walked.code === "ENOENT") return false
    throw sysError(walked.code, "lstat", lexed.shown)
  },
  stat: async (root: RootWithWindow, request: Fields) => {
    const { lexed, walked } = await located(root, request, "path", true)
    const w = found(lexed, walked)
    noHardLink(lexed, w.stat, "stat")
    return fileInfo(w.stat)
  },
  readFile: (root: RootWithWindow, request: Fields, budget?: Budget) => readBytes(root, request, budget),
  readFileString: async (root: RootWithWindow, request: Fields, budget?: Budget): Promise<string> => {
    // The encoding is part of the request's shape: checked before any system call.
    const decoder = decoderFor(request.encoding)
    return decoder.decode(await readBytes(root, request, budget))
  },
  readDirectory: async (root: RootWithWindow, request: Fields): Promise<Array<string>> => {
    const recursive = flagOf(optionsOf(request).recursive)
    const { lexed, walked } = await located(root, request)
    const w = found(lexed, walked)
    noLink(lexed, w)
    if (!w.stat.isDirectory()) throw sysError("ENOTDIR", "scandir", lexed.shown)
    await gap(root)
    return recursive ? listRecursive(w.path, lexed.shown) : fsp.readdir(w.path)
  },
  readLink: async (root: RootWithWindow, request: Fields): Promise<string> => {
    const { lexed, walked } = await located(root, request)
    const w = found(lexed, walked)
    await gap(root)
    return fsp.readlink(w.path)
  },
  realPath: async (root: RootWithWindow, request: Fields): Promise<string> => {
    const { lexed, walked } = await located(root, request)
    const w = found(lexed, walked)
    noLink(lexed, w)
    return spelled(root, w.parts)
  },
  resolve,
  makeDirectory,
  remove,
  rename,
  chmod: async (root: RootWithWindow, request: Fields): Promise<void> => {
    const mode = modeOf(optionsOf(request).mode, undefined)
    if (mode === undefined) throw badArgumentFailure("chmod needs options.mode")
    await fsp.chmod(await settable(root, request, "chmod"), mode)
  },
  chown: async (root: RootWithWindow, request: Fields): Promise<void> => {
    const options = optionsOf(request)
    const uid = idOf(options.uid, "uid")
    const gid = idOf(options.gid, "gid")
    await fsp.chown(await settable(root, request, "chown"), uid, gid)
  },
  writeFile: async (root: RootWithWindow, request: Fields, _budget: Budget | undefined, writes: Writes): Promise<void> => {
    const { contentLimit } = writes
    const data = request.data
    if (typeof data !== "string" || data.length % 4 !== 0) {
      throw badArgumentFailure("writeFile data must be padded base64 (RFC 4648, no line breaks)")
    }
    // As the native extension: the size its length stands for is checked before its text, so an
    // oversized payload is refused for its size whatever it holds.
    const size = (data.length / 4) * 3 - (data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0)
    if (size > contentLimit) {
      throw badArgumentFailure(`writeFile payload of ${size} bytes exceeds the ${contentLimit} byte limit`)
    }
    if (!base64.test(data)) throw badArgumentFailure("writeFile data must be padded base64 (RFC 4648, no line breaks)")
    await write(root, request, Buffer.from(data, "base64"), writes)
  },
  writeFileString: async (root: RootWithWindow, request: Fields, _budget: Budget | undefined, writes: Writes) => {
    if (typeof request.data !== "string") throw badArgumentFailure("writeFileString data must be a string")
    await write(root, request, new TextEncoder().encode(request.data), writes)
  }
} as const

/** @internal */
export type OperationName = keyof typeof operations
