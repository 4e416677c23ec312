/**
 * Refusals for what cannot be confined: every method of a kernel over a host without the atomic
 * extension, and single methods no executor request can express.
 *
 * @internal
 */
import { Effect, FileSystem, Sink, Stream, PlatformError } from "effect"
import { type Action, PermissionDenied, toPlatformError } from "../Permission.ts"

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
 * kernel names for it and the path normalized against the workspace.
 *
 * @internal
 */
export const refusing = (normalize: (value: string) => string, systemTemp: string): FileSystem.FileSystem => {
  const no = (action: Action, method: string, value: string) =>
    Effect.suspend(() => Effect.fail(unavailable(action, method, typeof value === "string" ? normalize(value) : String(value))))
  const fs = FileSystem.make({
    access: (value) => no("fs:read", "access", value),
    copy: (from) => no("fs:read", "copy", from),
    copyFile: (from) => no("fs:read", "copyFile", from),
    chmod: (value) => no("fs:write", "chmod", value),
    chown: (value) => no("fs:write", "chown", value),
    link: (from) => no("fs:read", "link", from),
    lstat: (value) => no("fs:read", "lstat", value),
    makeDirectory: (value) => no("fs:write", "makeDirectory", value),
    makeTempDirectory: (o) => no("fs:write", "makeTempDirectory", o?.directory ?? systemTemp),
    makeTempDirectoryScoped: (o) => no("fs:write", "makeTempDirectoryScoped", o?.directory ?? systemTemp),
    makeTempFile: (o) => no("fs:write", "makeTempFile", o?.directory ?? systemTemp),
    makeTempFileScoped: (o) => no("fs:write", "makeTempFileScoped", o?.directory ?? systemTemp),
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
    watch: (value) => Stream.unwrap(no("fs:read", "watch", value)),
    writeFile: (value) => no("fs:write", "writeFile", value)
  })
  return {
    ...fs,
    exists: (value) => no("fs:read", "exists", value),
    glob: (pattern, options) =>
      no("fs:read", "glob", typeof options?.root === "string" ? `${normalize(options.root)}/${pattern}` : pattern),
    readFileString: (value) => no("fs:read", "readFileString", value),
    writeFileString: (value) => no("fs:write", "writeFileString", value),
    stream: (value) => Stream.unwrap(no("fs:read", "stream", value)),
    sink: (value) => Sink.unwrap(no("fs:write", "sink", value))
  }
}
