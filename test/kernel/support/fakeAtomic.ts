/**
 * TEST DOUBLE of the atomic host extension, for developing the kernel before the real extensions
 * (`NodeAtomicFileSystem`, `PathAtomicFileSystem`) landed, and for counting executor trips.
 *
 * It is NOT confinement: it walks host paths with `lstat` (no descriptors), so it has every race the
 * real executor exists to close. It only mimics the answers: links refused on the way (the final
 * one only where the operation acts on the link), hard-linked files refused, `resolve` stopping at
 * the first link, the root's identity checked on every request, `batch` members failing alone.
 */
import * as NFS from "node:fs"
import * as NPath from "node:path"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, FileSystem, Glob, Layer, PlatformError, Result } from "effect"
import {
  type AtomicBatchRequest,
  type AtomicBatchValue,
  type AtomicFileSystem,
  type AtomicRequest,
  withAtomicFileSystem
} from "../../../src/protocol/wire.ts"
import { anchorExcludes } from "../../../src/protocol/excludes.ts"
import { fileInfo } from "./fileInfo.ts"

/** Every request the double received, for trip-counting tests. */
export interface Trips {
  readonly log: Array<AtomicRequest>
}

class Refused extends Error {
  constructor(readonly tag: PlatformError.SystemErrorTag, readonly description: string, readonly at: string) {
    super(description)
  }
}

const identityOf = (p: string): string => {
  const st = NFS.statSync(p, { bigint: true })
  return `${st.dev}:${st.ino}`
}

const mapErrno = (e: unknown, method: string, at: string): PlatformError.PlatformError => {
  if (e instanceof Refused) {
    return PlatformError.systemError({ _tag: e.tag, module: "FileSystem", method, pathOrDescriptor: e.at, description: e.description })
  }
  const code = (e as NodeJS.ErrnoException).code
  const tag: PlatformError.SystemErrorTag = code === "ENOENT"
    ? "NotFound"
    : code === "EACCES" || code === "EPERM" || code === "ELOOP"
    ? "PermissionDenied"
    : code === "EEXIST"
    ? "AlreadyExists"
    : code === "EISDIR" || code === "ENOTDIR"
    ? "BadResource"
    : code === "EBUSY"
    ? "Busy"
    : "Unknown"
  return PlatformError.systemError({ _tag: tag, module: "FileSystem", method, pathOrDescriptor: at, description: String(e) })
}

/** Builds the double's extension; `options.contentLimit` is advertised as is. */
export const makeFakeAtomic = (options: { readonly contentLimit?: number } = {}): { atomic: AtomicFileSystem; trips: Trips } => {
  const trips: Trips = { log: [] }

  const locate = (request: AtomicRequest, value: string) => {
    const boundary = request.boundaryRoot!
    const logical = request.logicalRoot ?? boundary
    if (identityOf(boundary) !== request.rootIdentity) {
      throw new Refused("Busy", "workspace_identity_changed", boundary)
    }
    const normalized = NPath.resolve(value)
    for (const base of [logical, boundary]) {
      const rel = NPath.relative(base, normalized)
      if (rel === "" || (!rel.startsWith("..") && !NPath.isAbsolute(rel))) {
        return { boundary, parts: rel === "" ? [] : rel.split(NPath.sep) }
      }
    }
    throw new Refused("PermissionDenied", "path escapes the pinned root", value)
  }

  /** Walks without following: every component but (optionally) the last must not be a link. */
  const walk = (request: AtomicRequest, value: string, finalMayBeLink: boolean): string => {
    const { boundary, parts } = locate(request, value)
    let at = boundary
    parts.forEach((part, i) => {
      at = NPath.join(at, part)
      let st: NFS.Stats | undefined
      try {
        st = NFS.lstatSync(at)
      } catch {
        st = undefined
      }
      if (st?.isSymbolicLink() && !(finalMayBeLink && i === parts.length - 1)) {
        throw new Refused("PermissionDenied", "a path component is a symbolic link", value)
      }
    })
    return at
  }

  const noHardLink = (host: string, value: string) => {
    const st = NFS.lstatSync(host)
    if (st.isFile() && st.nlink > 1) throw new Refused("PermissionDenied", "hard-linked file", value)
    return st
  }

  const resolve = (request: AtomicRequest, value: string) => {
    const { boundary, parts } = locate(request, value)
    let at = boundary
    for (const [i, part] of parts.entries()) {
      const next = NPath.join(at, part)
      let st: NFS.Stats
      try {
        st = NFS.lstatSync(next)
      } catch (e) {
        // Missing: the rest kept as requested. Anything else (a component under a file) fails.
        if ((e as NodeJS.ErrnoException).code === "ENOENT") return { path: NPath.join(at, ...parts.slice(i)), target: null }
        throw e
      }
      if (st.isSymbolicLink()) return { path: next, target: NFS.readlinkSync(next) }
      if (!st.isDirectory() && i < parts.length - 1) throw Object.assign(new Error("not a directory"), { code: "ENOTDIR" })
      at = next
    }
    return { path: at, target: null }
  }

  const listAll = (dir: string, rel: string, out: Array<{ rel: string; dir: boolean }>) => {
    for (const entry of NFS.readdirSync(dir, { withFileTypes: true })) {
      const r = rel === "" ? entry.name : `${rel}/${entry.name}`
      out.push({ rel: r, dir: entry.isDirectory() })
      if (entry.isDirectory()) listAll(NPath.join(dir, entry.name), r, out)
    }
  }

  const run = (request: AtomicRequest): unknown => {
    switch (request.operation) {
      case "exists": {
        try {
          walk(request, request.path, true)
          NFS.lstatSync(walk(request, request.path, true))
          return true
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === "ENOENT") return false
          throw e
        }
      }
      case "stat": {
        const host = walk(request, request.path, true)
        noHardLink(host, request.path)
        return fileInfo(NFS.lstatSync(host, { bigint: true }))
      }
      case "readFile": {
        const host = walk(request, request.path, false)
        noHardLink(host, request.path)
        return new Uint8Array(NFS.readFileSync(host))
      }
      case "readFileString": {
        const host = walk(request, request.path, false)
        noHardLink(host, request.path)
        return new TextDecoder(request.encoding ?? "utf-8").decode(NFS.readFileSync(host))
      }
      case "readDirectory":
        return NFS.readdirSync(walk(request, request.path, false), { recursive: request.options?.recursive === true }) as Array<string>
      case "readLink":
        return NFS.readlinkSync(walk(request, request.path, true))
      case "realPath":
        return NFS.realpathSync(walk(request, request.path, false))
      case "resolve":
        return resolve(request, request.path)
      case "glob": {
        const root = walk(request, request.root, false)
        const pattern = NPath.isAbsolute(request.pattern)
          ? NPath.relative(NPath.resolve(request.root), request.pattern)
          : request.pattern
        const glob = Glob.make(pattern)
        // As the executors read them: a relative exclude against the request's root.
        const exclude = anchorExcludes(request.root, request.options?.exclude ?? []).map((e) => Glob.make(e, { dot: true }))
        const all: Array<{ rel: string; dir: boolean }> = []
        listAll(root, "", all)
        const excluded = (rel: string) => {
          const segments = rel.split("/")
          return segments.some((_, i) => {
            const at = NPath.join(NPath.resolve(request.root), ...segments.slice(0, i + 1))
            return exclude.some((x) => Glob.match(x, at))
          })
        }
        return all
          .filter((e) => Glob.match(glob, e.rel) && !excluded(e.rel))
          // In the pattern's own spelling of the root, as the executors answer.
          .map((e) => NPath.isAbsolute(request.pattern) ? NPath.join(NPath.resolve(request.root), e.rel) : e.rel)
      }
      case "makeDirectory":
        NFS.mkdirSync(walk(request, request.path, false), request.options)
        return undefined
      case "remove":
        NFS.rmSync(walk(request, request.path, true), {
          recursive: request.options?.recursive === true,
          force: request.options?.force === true
        })
        return undefined
      case "rename":
        NFS.renameSync(walk(request, request.from, true), walk(request, request.to, true))
        return undefined
      case "chmod": {
        const host = walk(request, request.path, false)
        noHardLink(host, request.path)
        NFS.chmodSync(host, request.options.mode)
        return undefined
      }
      case "chown": {
        const host = walk(request, request.path, false)
        noHardLink(host, request.path)
        NFS.chownSync(host, request.options.uid, request.options.gid)
        return undefined
      }
      case "writeFile":
      case "writeFileString": {
        const host = walk(request, request.path, false)
        try {
          noHardLink(host, request.path)
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e
        }
        const data = request.operation === "writeFile" ? Buffer.from(request.data, "base64") : request.data
        NFS.writeFileSync(host, data, { flag: request.options?.flag ?? "w", mode: request.options?.mode ?? 0o666 })
        return undefined
      }
      case "batch": {
        locate(request, request.boundaryRoot!)
        const entries = request.requests.map((member: AtomicBatchRequest, index) => {
          // A glob member carries its pattern in `path`, as the batch frames it.
          const shaped = member.operation === "glob" ? { ...member, pattern: member.path } : member
          const one = { ...shaped, boundaryRoot: request.boundaryRoot, logicalRoot: request.logicalRoot, rootIdentity: request.rootIdentity } as AtomicRequest
          try {
            const value = run(one)
            const answer = (member.operation === "resolve"
              ? { operation: "resolve", resolution: value }
              : { operation: member.operation, value }) as AtomicBatchValue
            return { index, path: member.path, result: Result.succeed(answer) }
          } catch (e) {
            return { index, path: member.path, result: Result.fail(mapErrno(e, member.operation, member.path)) }
          }
        })
        return { rootIdentity: request.rootIdentity!, entries }
      }
    }
  }

  const atomic: AtomicFileSystem = {
    noFollowAuthorization: true,
    identifyRoot: (p) =>
      Effect.try({ try: () => identityOf(p), catch: (e) => mapErrno(e, "identifyRoot", p) }),
    execute: (request) =>
      Effect.suspend(() => {
        trips.log.push(request)
        return Effect.try({
          try: () => run(request) as never,
          catch: (e) => mapErrno(e, request.operation, "path" in request ? request.path : "")
        })
      }),
    batchLimits: { size: 64, response: 1 << 20 },
    contentLimit: options.contentLimit ?? 1 << 20
  }
  return { atomic, trips }
}

/** Node's file system carrying the double's extension. */
export const layerFakeAtomic = (atomic: AtomicFileSystem): Layer.Layer<FileSystem.FileSystem> =>
  Layer.effect(
    FileSystem.FileSystem,
    Effect.map(Effect.service(FileSystem.FileSystem), (fs) => withAtomicFileSystem({ ...fs }, atomic))
  ).pipe(Layer.provide(NodeFileSystem.layer))
