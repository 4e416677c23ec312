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
 * CAP_SYS_ADMIN, which remounts any read-only bind writable. An IPC namespace of its own keeps it
 * from the user's System V and POSIX message queues, semaphores and shared memory. With the network `"none"` it also
 * gets a network namespace of its own with only a loopback interface, which also cuts it off from
 * the host's abstract Unix sockets (they belong to a network namespace, not to the file system).
 *
 * bubblewrap stops at 9,000 arguments, counted across `--args` too: a plan that needs more is
 * refused here with the count, before anything runs.
 *
 * @since 0.1.0
 */
import { ConfinementError } from "./errors.ts"
import type { Layer } from "./layers.ts"
import type { Mode, Network } from "./policy.ts"
import { bytesOf, type RawPath, rawOf } from "./raw.ts"

export interface BwrapInput {
  readonly mode: Mode
  readonly network: Network
  readonly layers: ReadonlyArray<Layer>
  readonly remountReadOnly: ReadonlyArray<RawPath>
  /** The child's working directory (canonical). */
  readonly cwd: RawPath
}

/** A bwrap argument list with descriptor numbers still symbolic: `{ fd: slot }` or `{ empty: k }`. */
export type BwrapArgument = RawPath | { readonly fd: number } | { readonly empty: number }

/**
 * The most arguments bubblewrap parses (its MAX_ARGS), `--args` included.
 *
 * @since 0.1.0
 */
export const bwrapArgumentLimit = 9000

/** What the runner adds on bubblewrap's command line (`--args`, `--json-status-fd`, `--chdir`), kept free. */
const commandLineArguments = 16

/** How many arguments each layer takes (see {@link bwrapArguments}); a mask directory's remount included. */
export const argumentsOf = (layer: Layer): number => (layer.op === "bind" ? 3 : layer.op === "mask-file" ? 4 : 6)

/** The fixed arguments of every plan: isolation, base, `/dev`, `/proc`, working directory. */
const fixedArguments = 16

const tooMany = (needed: number, mounts: number) =>
  new ConfinementError(
    "too-many-paths",
    `this launch needs ${needed} bubblewrap arguments for ${mounts} mounts, and bubblewrap takes at most ` +
      `${bwrapArgumentLimit}: protect a common parent of the protected paths instead (for example --protect 'vendor=read-only'), ` +
      `so that the paths inside it need no mount of their own`
  )

/**
 * Refuses, before anything is held, a plan of `layers` bubblewrap would not take, saying how many
 * arguments it needs and for how many mounts.
 *
 * @since 0.1.0
 */
export const assertWithinBwrapLimit = (layers: ReadonlyArray<Layer>): void => {
  let needed = fixedArguments + commandLineArguments
  for (const l of layers) needed += argumentsOf(l)
  if (needed > bwrapArgumentLimit) throw tooMany(needed, layers.length)
}

/**
 * The arguments, in order; `mask-file` layers number their empty-file descriptors 0, 1, … in order.
 *
 * @since 0.1.0
 */
export const bwrapArguments = (input: BwrapInput): Array<BwrapArgument> => {
  const out: Array<BwrapArgument> = ["--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc"]
  if (input.network === "none") out.push("--unshare-net")
  out.push("--cap-drop", "ALL")
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
  if (out.length + commandLineArguments > bwrapArgumentLimit) throw tooMany(out.length + commandLineArguments, input.layers.length)
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
