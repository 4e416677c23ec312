/**
 * Refusals for what the kernel cannot confine: a host without the atomic extension refuses every
 * method, and single methods the wire cannot express refuse the same way.
 *
 * @internal
 */
import { Effect, FileSystem, type Path, Stream } from "effect"
import { type Action, PermissionDenied, toPlatformError } from "../Permission.ts"

/** @internal */
export const description = "host does not provide descriptor-relative, no-follow filesystem isolation"

/** @internal */
export const unconfined = (action: Action, method: string, resource: string) =>
  toPlatformError({
    method,
    error: new PermissionDenied({ capability: { action, resource }, reason: description })
  })

/** A file system whose every method refuses: the kernel over a host it cannot confine. @internal */
export const refusing = (logicalRoot: string, path: Path.Path, systemTemp: string): FileSystem.FileSystem => {
  const at = (value: string) => path.resolve(logicalRoot, value)
  const no = (action: Action, method: string, value: string) => Effect.fail(unconfined(action, method, at(value)))
  const temp = systemTemp
  const fs = FileSystem.make({
    access: (value) => no("fs:read", "access", value),
    copy: (from) => no("fs:read", "copy", from),
    copyFile: (from) => no("fs:read", "copyFile", from),
    chmod: (value) => no("fs:write", "chmod", value),
    chown: (value) => no("fs:write", "chown", value),
    link: (from) => no("fs:read", "link", from),
    lstat: (value) => no("fs:read", "lstat", value),
    makeDirectory: (value) => no("fs:write", "makeDirectory", value),
    makeTempDirectory: (o) => no("fs:write", "makeTempDirectory", o?.directory ?? temp),
    makeTempDirectoryScoped: (o) => no("fs:write", "makeTempDirectoryScoped", o?.directory ?? temp),
    makeTempFile: (o) => no("fs:write", "makeTempFile", o?.directory ?? temp),
    makeTempFileScoped: (o) => no("fs:write", "makeTempFileScoped", o?.directory ?? temp),
    open: (value) => no("fs:read", "open", value),
    readDirectory: (value) => no("fs:read", "readDirectory", value),
    readDirectoryEntries: (value) => no("fs:read", "readDirectoryEntries", value),
    readFile: (value) => no("fs:read", "readFile", value),
    readLink: (value) => no("fs:read", "readLink", value),
    realPath: (value) => no("fs:read", "realPath", value),
    remove: (value) => no("fs:write", "remove", value),
    rename: (from) => no("fs:write", "rename", from),
    stat: (value) => no("fs:read", "stat", value),
    symlink: (_, to) => no("fs:write", "symlink", to),
    truncate: (value) => no("fs:write", "truncate", value),
    utimes: (value) => no("fs:write", "utimes", value),
    watch: (value) => Stream.fail(unconfined("fs:read", "watch", at(value))),
    writeFile: (value) => no("fs:write", "writeFile", value)
  })
  return {
    ...fs,
    exists: (value) => no("fs:read", "exists", value),
    glob: (pattern) => no("fs:read", "glob", pattern),
    readFileString: (value) => no("fs:read", "readFileString", value),
    writeFileString: (value) => no("fs:write", "writeFileString", value)
    // `stream` and `sink` stay derived from the refusing `open`.
  }
}

