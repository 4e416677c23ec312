/**
 * Creating missing directories with every component checked, in one `mkdirs` trip.
 *
 * A blanket `mkdir -p` checked only at its end would create intermediate directories no one
 * approved. Here each directory that will be created is checked first, shallowest first, and the
 * first refusal stops everything before anything exists. Components that already exist need no
 * check (nothing is created there); a component the check refuses must therefore exist, which one
 * batched `stat` confirms. The `mkdirs` program then creates the rest through pinned parents, and
 * its answer (every directory it created, with its identity) is compared with what was checked: a
 * directory it had to create that was not checked (one removed under us in the meantime) is
 * removed again through `rmdirs` and the whole operation refused.
 *
 * @since 0.1.0
 */
import type { PinnedRoot } from "../PinnedRoot.ts"
import type { PinnedFsError } from "../internal/errors.ts"
import { ancestors } from "./paths.ts"

/**
 * A directory made here, with the identity (`dev:ino`) that lets it be removed again only while it
 * is still that directory.
 *
 * @since 0.1.0
 * @category models
 */
export interface CreatedDirectory {
  readonly path: string
  readonly identity: string
}

/** Mode of a directory we create: never world-writable, whatever the umask. */
const directoryMode = 0o755

/**
 * Ensures every directory in `dirs` (canonical, parent before child) exists. `check` answers a
 * refusal for a directory that may not be created, or `undefined`.
 *
 * @since 0.1.0
 * @category directories
 */
export const ensureDirectories = async (
  root: PinnedRoot,
  dirs: ReadonlyArray<string>,
  check: (dir: string) => PinnedFsError | undefined
): Promise<ReadonlyArray<CreatedDirectory>> => {
  if (dirs.length === 0) return []
  const refusals = new Map<string, PinnedFsError>()
  for (const dir of dirs) {
    const refused = check(dir)
    if (refused) refusals.set(dir, refused)
  }
  if (refusals.size > 0) {
    const refused = [...refusals.keys()]
    const stats = await root.batch(refused.map((path) => ({ operation: "stat" as const, path })))
    for (let i = 0; i < refused.length; i++) {
      const r = stats[i]!
      if (!r.ok && r.error.reason === "NotFound") throw refusals.get(refused[i]!)!
    }
  }
  const plan = dirs.filter((d) => !refusals.has(d)).map((path) => ({ path, mode: directoryMode }))
  if (plan.length === 0) return []
  if (refusals.size > 0) {
    // The stat trip gave the caller's state time to change (a façade whose invocation returned
    // meanwhile refuses from then on): asked again just before anything is created.
    for (const d of plan) {
      const refused = check(d.path)
      if (refused) throw refused
    }
  }
  const result = await root.mkdirs(plan)
  const unchecked = result.created.filter((c) => refusals.has(c.path))
  if (unchecked.length > 0) {
    // Child before parent, each only while it is still the directory we made.
    const owned = [...result.created].reverse().map((c) => ({ path: c.path, identity: c.identity, optional: true }))
    await root.rmdirs(owned)
    throw refusals.get(unchecked[0]!.path)!
  }
  if (result.error) throw result.error
  return result.created
}

/**
 * Runs `op`; if it fails because a parent is missing, creates the parents of `path` (each
 * checked) and runs it once more. The common case, parents present, costs nothing extra.
 *
 * @since 0.1.0
 * @category directories
 */
export const withParents = async <A>(
  root: PinnedRoot,
  path: string,
  check: (dir: string) => PinnedFsError | undefined,
  op: () => Promise<A>
): Promise<{ readonly value: A; readonly created: ReadonlyArray<CreatedDirectory> }> => {
  try {
    return { value: await op(), created: [] }
  } catch (e) {
    if (!isMissingParent(e, path)) throw e
  }
  const parents = ancestors(path)
  const created = await ensureDirectories(root, parents, check)
  return { value: await op(), created }
}

const isMissingParent = (e: unknown, path: string): boolean =>
  typeof e === "object" && e !== null && (e as PinnedFsError).reason === "NotFound" && path.includes("/")
