/**
 * The runtime directory: where each launch keeps the record of what it made, so that what a launch
 * killed with SIGKILL left behind (the empty protected directories it made, its private temporary
 * root) is removed by the next launch, or by `pinnedfs run --cleanup`.
 *
 * It is this user's alone. Chosen, in order: the execution target's `runtimeDirectory`,
 * `PINNEDFS_RUNTIME_DIR`, `$XDG_RUNTIME_DIR/pinnedfs` (a per-user tmpfs under systemd), else
 * `pinnedfs-<uid>` in the host's temporary directory. The native side makes it 0700 when missing
 * and refuses it when it is a symbolic link (never followed), another user's, or open to anyone
 * else: a record says what to remove, so nobody else may write one. Every launch that should clean
 * up after the others must use the same directory.
 *
 * @since 0.2.0
 */
import * as os from "node:os"
import * as path from "node:path"
import type { Strategy } from "../PinnedRoot.ts"
import { ConfinementError } from "./errors.ts"
import { rawOf } from "./raw.ts"
import { type RuntimePlace, type SweptItem, sweepRecords } from "./wire.ts"

/** The runtime directory to use: `explicit`, else the environment's, else the default. @internal */
export const runtimeDirectory = (explicit: string | null): string => {
  if (explicit !== null) return path.resolve(explicit)
  const named = process.env["PINNEDFS_RUNTIME_DIR"]
  if (named !== undefined && named !== "") return path.resolve(named)
  const xdg = process.env["XDG_RUNTIME_DIR"]
  if (xdg !== undefined && path.isAbsolute(xdg)) return path.join(xdg, "pinnedfs")
  return path.join(os.tmpdir(), `pinnedfs-${process.getuid?.() ?? "user"}`)
}

/** The directory as the native programs take it: a trusted parent and one component. @internal */
export const runtimePlace = (directory: string): RuntimePlace => {
  if (directory.includes("\0")) throw new ConfinementError("invalid-target", "the runtime directory must be a path without NUL bytes")
  const abs = path.resolve(directory)
  if (abs === "/") throw new ConfinementError("invalid-target", "'/' cannot be the runtime directory")
  return { parent: rawOf(path.dirname(abs)), name: rawOf(path.basename(abs)) }
}

/** What `cleanupLeftovers` did. @since 0.2.0 @category models */
export interface LeftoversReport {
  /** The runtime directory swept. */
  readonly directory: string
  /** Each thing a dead launch left: removed, kept (a live launch relies on it, or it is no longer empty), or refused. */
  readonly items: ReadonlyArray<SweptItem>
  /** Records of dead launches removed whole. */
  readonly records: number
  /** Records of live launches, left alone. */
  readonly live: number
}

/**
 * Removes what launches that died without cleaning up left behind: each dead launch's sandbox
 * killed if it still runs, its directories removed through their pinned parents while they are
 * still the directories it made (one a live launch relies on is kept), its temporary root purged,
 * and its record removed once nothing of it stays. Live launches' records are left alone.
 *
 * @since 0.2.0
 */
export const cleanupLeftovers = async (
  options: { readonly runtimeDirectory?: string | undefined; readonly strategy?: Strategy | undefined } = {}
): Promise<LeftoversReport> => {
  const directory = runtimeDirectory(options.runtimeDirectory ?? null)
  const answer = await sweepRecords(options.strategy ?? "auto", runtimePlace(directory)).catch((e: unknown) => {
    throw new ConfinementError("validation-failed", `cannot sweep the runtime directory '${directory}': ${(e as Error).message}`, {
      cause: e
    })
  })
  return { directory, ...answer }
}
