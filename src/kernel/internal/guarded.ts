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
 * context (`guarded/context.ts`). The methods table (`methods.ts`) says which method is which: a
 * regular one is made here from its row; an irregular one is the body its concern module writes.
 *
 * @internal
 */
import { Effect, FileSystem } from "effect"
import type { Authorizer } from "./authorize.ts"
import { type Guard, makeGuard } from "./guarded/context.ts"
import { copy, copyFile } from "./guarded/copies.ts"
import { access, link, open, sink, stream, symlink, truncate, utimes, watch } from "./guarded/isolatedOnly.ts"
import { glob, readDirectory, readDirectoryEntries } from "./guarded/listings.ts"
import { exists, fusedReadPath, lstat, readPath, stat, writeFile, writePath } from "./guarded/single.ts"
import { makeTempDirectory, makeTempDirectoryScoped, makeTempFile, makeTempFileScoped } from "./guarded/temporary.ts"
import { remove, rename } from "./guarded/wholeTrees.ts"
import { irregularBody, type MethodName, methodNames, methods, type RegularRow, requestOf } from "./methods.ts"
import { traced } from "./traced.ts"

/** The irregular methods' bodies, each in the module of its concern. */
const irregular: Partial<Record<MethodName, (guard: Guard) => unknown>> = {
  access,
  copy,
  copyFile,
  exists,
  glob,
  link,
  lstat,
  makeTempDirectory,
  makeTempDirectoryScoped,
  makeTempFile,
  makeTempFileScoped,
  open,
  readDirectory,
  readDirectoryEntries,
  remove,
  rename,
  sink,
  stat,
  stream,
  symlink,
  truncate,
  utimes,
  watch,
  writeFile
}

/**
 * A regular method: its row's request on the caller's path, authorized for the row's action (a
 * fused read where the row says so), with the options argument copied at the call.
 */
const regular = (guard: Guard, name: MethodName, row: RegularRow<MethodName>) => {
  const build = requestOf(row)
  const send = (value: unknown, rest: ReadonlyArray<unknown>) =>
    (row.fused ? fusedReadPath : row.action === "fs:read" ? readPath : writePath)(guard, name, value, (p) => build(p, ...rest))
  const at = row.options
  return traced(`FileSystem.${name}`, (value: unknown, ...rest: Array<unknown>) =>
    at === undefined
      ? send(value, rest)
      : Effect.flatMap(guard.options(name, rest[at]), (copied) =>
          send(
            value,
            rest.map((r, i) => (i === at ? copied : r))
          )
        )
  )
}

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
  const table: Record<string, unknown> = {}
  for (const name of methodNames) {
    const row = methods[name]
    table[name] = row.kind === "regular" ? regular(guard, name, row) : (irregularBody(irregular, name) as (guard: Guard) => unknown)(guard)
  }
  // Every method is set here, `exists` and the others `FileSystem.make` would derive included: each
  // is one request of its own, authorized and sent as the client's kernel sends it.
  return { ...FileSystem.make(table as never), ...table } as FileSystem.FileSystem
}
