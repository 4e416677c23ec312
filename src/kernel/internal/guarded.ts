/**
 * The guarded file system: every method of Effect's `FileSystem`, authorized (see `authorize.ts`)
 * and then performed as one executor request on the path the caller gave, normalized against the
 * workspace root, exactly as the client's kernel sends it. A no-follow executor then refuses any
 * link on that path itself.
 *
 * Methods no executor request expresses are delegated to an isolated volume when the host is one,
 * and refused otherwise, as the client refuses them; except where pinnedfs performs them from
 * executor requests alone (`copy` and `copyFile` of a regular file, temporary entries inside a
 * named directory), which docs/kernel.md lists.
 *
 * Each concern lives in its own module under `guarded/`, every method built over one shared
 * context (`guarded/context.ts`); this file is only the table that puts them together, in the
 * manner of Effect's own `NodeFileSystem`, so a reader finds every method and where it is made
 * in one place.
 *
 * @internal
 */
import { FileSystem } from "effect"
import type { Authorizer } from "./authorize.ts"
import { makeGuard } from "./guarded/context.ts"
import { copy, copyFile } from "./guarded/copies.ts"
import { access, link, open, sink, stream, symlink, truncate, utimes, watch } from "./guarded/isolatedOnly.ts"
import { glob, readDirectory, readDirectoryEntries } from "./guarded/listings.ts"
import {
  chmod,
  chown,
  exists,
  lstat,
  makeDirectory,
  readFile,
  readFileString,
  readLink,
  realPath,
  stat,
  writeFile,
  writeFileString
} from "./guarded/single.ts"
import { makeTempDirectory, makeTempDirectoryScoped, makeTempFile, makeTempFileScoped } from "./guarded/temporary.ts"
import { remove, rename } from "./guarded/wholeTrees.ts"

/**
 * @since 0.1.0
 * @internal
 */
export const makeGuarded = (options: {
  readonly auth: Authorizer
  /** The name a temporary entry made without a `directory` is authorized as. */
  readonly systemTemp: string
}): FileSystem.FileSystem => {
  const guard = makeGuard(options)
  return {
    ...FileSystem.make({
      access: access(guard),
      chmod: chmod(guard),
      chown: chown(guard),
      copy: copy(guard),
      copyFile: copyFile(guard),
      link: link(guard),
      lstat: lstat(guard),
      makeDirectory: makeDirectory(guard),
      makeTempDirectory: makeTempDirectory(guard),
      makeTempDirectoryScoped: makeTempDirectoryScoped(guard),
      makeTempFile: makeTempFile(guard),
      makeTempFileScoped: makeTempFileScoped(guard),
      open: open(guard),
      readDirectory: readDirectory(guard),
      readDirectoryEntries: readDirectoryEntries(guard),
      readFile: readFile(guard),
      readLink: readLink(guard),
      realPath: realPath(guard),
      remove: remove(guard),
      rename: rename(guard),
      stat: stat(guard),
      symlink: symlink(guard),
      truncate: truncate(guard),
      utimes: utimes(guard),
      watch: watch(guard),
      writeFile: writeFile(guard)
    }),
    // Methods `FileSystem.make` would derive from the ones above; each is one request of its own
    // here, so that it is authorized and sent as the client's kernel sends it.
    exists: exists(guard),
    glob: glob(guard),
    readFileString: readFileString(guard),
    sink: sink(guard),
    stream: stream(guard),
    writeFileString: writeFileString(guard)
  }
}
