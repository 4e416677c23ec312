/**
 * `glob` for the path-based executor: Effect's own glob walk (`FileSystem.make` builds it from
 * `readDirectoryEntries`, `stat` and `readLink`), fed those three through the component check so
 * that no link is ever traversed, with the absolute pattern cut at the pinned root's literal prefix.
 *
 * The kernel sends an absolute `pattern`, the `root` it was resolved from, and `exclude` patterns as
 * the caller wrote them. Answers are absolute, in the pattern's spelling of the root, as Effect's
 * glob answers an absolute pattern. Excludes are read as the native extension reads them
 * (`anchorExcludes`): a relative one against the request's `root`, as Effect reads it against `root`
 * for the caller's relative pattern, an absolute one as it is; one under the pattern's root spelling
 * also keeps its directory from being read, any other is applied to the answer.
 *
 * @internal
 */
import { Effect, FileSystem, Glob, type PlatformError } from "effect"
import * as fsp from "node:fs/promises"
import { anchorExcludes } from "../protocol/excludes.ts"
import { below, found, gap, lex, noLink, type RootWithWindow, walk } from "./confine.ts"
import { badArgumentFailure, refuse, sysError, toFailure, toPlatformError } from "./failure.ts"
import { fromNodeStats as fileInfo } from "../protocol/fileInfo.ts"

const checked = <A>(path: string, run: () => Promise<A>): Effect.Effect<A, PlatformError.PlatformError> =>
  Effect.tryPromise({ try: run, catch: (u) => toPlatformError(toFailure(u, path), "glob") })

const direntType = (d: import("node:fs").Dirent): FileSystem.File.Type =>
  d.isFile()
    ? "File"
    : d.isDirectory()
      ? "Directory"
      : d.isSymbolicLink()
        ? "SymbolicLink"
        : d.isBlockDevice()
          ? "BlockDevice"
          : d.isCharacterDevice()
            ? "CharacterDevice"
            : d.isFIFO()
              ? "FIFO"
              : d.isSocket()
                ? "Socket"
                : "Unknown"

/** Effect's glob over a file system whose every lookup is checked and never follows a link. */
const confinedGlob = (root: RootWithWindow): FileSystem.FileSystem["glob"] => {
  const stat = (path: string) =>
    checked(path, async () => {
      const lexed = lex(root, path)
      // lstat semantics: a link is reported as one, so the walk never descends through it.
      // A check only: Effect's walk decides from it what to read, and the read is the use.
      return fileInfo(found(lexed, await walk(root, lexed)).stat)
    })
  const readDirectoryEntries = (path: string) =>
    checked(path, async () => {
      const lexed = lex(root, path)
      const w = found(lexed, await walk(root, lexed))
      noLink(lexed, w)
      if (!w.stat.isDirectory()) throw sysError("ENOTDIR", "scandir", lexed.shown)
      await gap(root)
      const entries = await fsp.readdir(w.path, { withFileTypes: true })
      return entries.map((d): FileSystem.DirectoryEntry => ({ name: d.name, type: direntType(d) }))
    })
  const readLink = (path: string) =>
    checked(path, async () => {
      const lexed = lex(root, path)
      const w = found(lexed, await walk(root, lexed))
      await gap(root)
      return fsp.readlink(w.path)
    })
  return FileSystem.make({ ...FileSystem.makeNoop({}), stat, readDirectoryEntries, readLink }).glob
}

const absolute = (value: unknown, what: string): string => {
  if (typeof value !== "string") throw badArgumentFailure(`glob ${what} must be a string`)
  if (value.includes("\0")) throw badArgumentFailure(`glob ${what} contains a NUL byte`)
  if (!value.startsWith("/")) throw badArgumentFailure(`glob ${what} must be absolute, got '${value.slice(0, 256)}'`)
  return value
}

const excludesOf = (request: Record<string, unknown>): Array<string> => {
  const options = request.options
  if (options === undefined || options === null) return []
  if (typeof options !== "object" || Array.isArray(options)) throw badArgumentFailure("glob options must be an object")
  const exclude = (options as { exclude?: unknown }).exclude ?? []
  if (!Array.isArray(exclude) || exclude.some((e) => typeof e !== "string" || e.includes("\0"))) {
    throw badArgumentFailure("glob exclude must be an array of strings without NUL bytes")
  }
  return exclude as Array<string>
}

/** Every proper ancestor directory of an absolute path ("/a/", "/a/b/"). */
const ancestors = (path: string): Array<string> => {
  const out: Array<string> = []
  for (let i = path.indexOf("/", 1); i !== -1; i = path.indexOf("/", i + 1)) out.push(path.slice(0, i + 1))
  return out
}

const prepare = (root: RootWithWindow, request: Record<string, unknown>) => {
  const pattern = absolute(request.pattern, "pattern")
  // An absolute pattern decides alone, as in Effect's glob: `root` only has to be a string.
  if (typeof request.root !== "string" || request.root.includes("\0")) {
    throw badArgumentFailure("glob root must be a string without NUL bytes")
  }
  const exclude = excludesOf(request)
  const rest = below(root, pattern)
  if (rest === undefined) throw refuse("escape", "EACCES", "validate", pattern, "glob pattern is outside the pinned root")
  const prefix = pattern.slice(0, pattern.length - rest.length).replace(/\/$/, "")
  // "/ws//src/*" must stay relative to the root: a leading "/" would make Effect's glob walk from "/".
  const relative = rest.replace(/^\/+/, "")
  const anchored = anchorExcludes(request.root, exclude)
  const literalPrefix = `${Glob.escape(prefix)}/`
  const early: Array<string> = []
  const late: Array<Glob.Glob> = []
  for (const e of anchored) {
    if (e.startsWith(literalPrefix) && e.length > literalPrefix.length) early.push(e.slice(literalPrefix.length))
    else late.push(Glob.make(e, { dot: true }))
  }
  // The walk below starts inside the root and never lists the root itself, but Effect's walk of the
  // absolute pattern reaches it as a name ("dir/**" includes "dir"): answer it the same way.
  const dir = prefix === "" ? "/" : prefix
  const withRoot =
    relative !== "" && Glob.match(Glob.make(pattern), dir) && !anchored.some((e) => Glob.match(Glob.make(e, { dot: true }), dir))
  return { pattern, rest: relative, prefix, early, late, withRoot: withRoot ? [dir] : [] }
}

/** @internal */
export const glob = (root: RootWithWindow, request: Record<string, unknown>): Effect.Effect<Array<string>, PlatformError.PlatformError> =>
  Effect.try({
    try: () => prepare(root, request),
    catch: (u) => toPlatformError(toFailure(u, String(request.pattern)), "glob")
  }).pipe(
    Effect.flatMap(({ early, late, pattern, prefix, rest, withRoot }) =>
      rest === ""
        ? Effect.succeed([pattern])
        : Effect.map(confinedGlob(root)(rest, { root: root.boundaryRoot, exclude: early }), (paths) =>
            withRoot.concat(
              paths
                .map((p) => (prefix === "" ? `/${p}` : `${prefix}/${p}`))
                // Effect never reads an excluded directory, so nothing below one is answered either.
                .filter((p) => !late.some((g) => Glob.match(g, p) || ancestors(p).some((d) => Glob.match(g, d))))
            )
          )
    )
  )
