/**
 * The bubblewrap rendering of a mount plan (Linux). Every bind's source is a descriptor the final
 * validation opened with no link followed (`--bind-fd`/`--ro-bind-fd`), so bubblewrap never
 * resolves a source path: it mounts exactly the object that was checked. Arguments travel as
 * NUL-separated bytes on a descriptor (`--args`), so any name that is not NUL-free text still
 * reaches the sandbox unchanged.
 *
 * The sandbox also gets its own PID namespace and a fresh `/proc` (a host `/proc` would offer
 * `/proc/PID/root` of the caller's other processes: a way around every mount), a minimal `/dev`,
 * a new session (no terminal injection into the caller's terminal), and dies with its parent.
 * Every capability is dropped: bubblewrap started by root otherwise leaves the command root with
 * CAP_SYS_ADMIN, which remounts any read-only bind writable.
 *
 * @since 0.1.0
 */
import type { Layer } from "./layers.ts"
import type { Mode } from "./policy.ts"
import { bytesOf, type RawPath, rawOf } from "./raw.ts"

export interface BwrapInput {
  readonly mode: Mode
  readonly layers: ReadonlyArray<Layer>
  readonly remountReadOnly: ReadonlyArray<RawPath>
  /** The child's working directory (canonical). */
  readonly cwd: RawPath
}

/** A bwrap argument list with descriptor numbers still symbolic: `{ fd: slot }` or `{ devnull: k }`. */
export type BwrapArgument = RawPath | { readonly fd: number } | { readonly empty: number }

/**
 * The arguments, in order; `mask-file` layers number their empty-file descriptors 0, 1, … in order.
 *
 * @since 0.1.0
 */
export const bwrapArguments = (input: BwrapInput): Array<BwrapArgument> => {
  const out: Array<BwrapArgument> = ["--die-with-parent", "--new-session", "--unshare-pid", "--cap-drop", "ALL"]
  out.push(input.mode === "full-access" ? "--bind" : "--ro-bind", "/", "/")
  out.push("--dev", "/dev", "--proc", "/proc")
  let empty = 0
  for (const l of input.layers) {
    switch (l.op) {
      case "bind":
        out.push(l.writable ? "--bind-fd" : "--ro-bind-fd", { fd: l.slot }, l.path)
        break
      case "mask-directory":
        out.push("--perms", `0${l.perms.toString(8).padStart(3, "0")}`, "--tmpfs", l.path)
        break
      case "mask-file":
        out.push("--perms", "0000", "--ro-bind-data", { empty: empty++ }, l.path)
        break
    }
  }
  for (const p of input.remountReadOnly) out.push("--remount-ro", p)
  out.push("--chdir", input.cwd)
  return out
}

/** How many empty-file descriptors the arguments need. @since 0.1.0 */
export const emptyFilesNeeded = (layers: ReadonlyArray<Layer>): number => layers.filter((l) => l.op === "mask-file").length

/**
 * The bytes for `--args`: each argument NUL-terminated, descriptors numbered by `fdOf`.
 *
 * @since 0.1.0
 */
export const encodeArguments = (
  args: ReadonlyArray<BwrapArgument>,
  fdOf: (slot: number) => number,
  emptyOf: (k: number) => number
): Buffer =>
  Buffer.concat(
    args.flatMap((a) => [
      bytesOf(typeof a === "string" ? a : "fd" in a ? rawOf(String(fdOf(a.fd))) : rawOf(String(emptyOf(a.empty)))),
      Buffer.from([0])
    ])
  )

/** The arguments as text for people (descriptors shown as `<fd:slot>`). @since 0.1.0 */
export const describeArguments = (args: ReadonlyArray<BwrapArgument>, show: (p: RawPath) => string): Array<string> =>
  args.map((a) => (typeof a === "string" ? show(a) : "fd" in a ? `<held:${a.fd}>` : `<empty:${a.empty}>`))
