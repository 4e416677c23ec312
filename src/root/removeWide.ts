/**
 * A recursive remove with the subtrees of its directory removed side by side.
 *
 * One native remove empties a tree on one worker thread, one unlink after another, each after the
 * proof that its directory is still beneath the root. `fs.promises.rm` keeps several unlinks in
 * flight, and on a tree of a thousand files in ten directories that made it faster. So the first
 * native remove is asked to split (`split`, native/ops/remove_tree.h): where the directory holds
 * two or more directories, it removes only the other entries, keeps the directory, and answers its
 * identity and the directories' names. Each of those is then removed by a native remove of its own,
 * up to {@link inFlight} at once on as many worker threads, each told the identity its parent must
 * have, so that none acts in a directory put in the first one's place meanwhile (it does nothing
 * there). A last native remove takes the directory itself and whatever appeared in it. Where
 * there is nothing to split (a file, a link, a flat or narrow directory), the first remove removed
 * everything, as it always did, in the one trip.
 *
 * Every act is still a native remove's, resolved from the pinned handle and proven as before: what
 * changes is only how many run at once.
 *
 * @internal
 */
import { native, type NativeRequest } from "../internal/native.ts"
import type { Runner } from "./runner.ts"

/** Native removes in flight at once: libuv's default pool has four threads. */
export const inFlight = 4

/**
 * Removes `path` (as the caller spelled it, relative to the root) and everything beneath it: its
 * directories side by side, then the rest. Settles only after every remove it started has settled;
 * the first failure is the answer, and no further directory is started after it.
 */
export const removeWide = async (root: Runner, path: string, shown: string, force: boolean): Promise<void> => {
  const first: NativeRequest = { op: native.ops.remove, path, recursive: true, force, split: true }
  const split = await root.run<Array<string> | undefined>(first, shown)
  if (split === undefined) return
  const [identity, ...names] = split
  let next = 0
  let failure: { readonly error: unknown } | undefined
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < names.length) {
      const child = `${path}/${names[next++]}`
      // One gone meanwhile is removed as far as this remove is concerned, as in one native remove.
      const request: NativeRequest = { op: native.ops.remove, path: child, recursive: true, force: true, identity }
      await root.run(request, child).catch((error: unknown) => {
        failure ??= { error }
      })
    }
  }
  await Promise.all(Array.from({ length: Math.min(inFlight, names.length) }, worker))
  if (failure !== undefined) throw failure.error
  return root.run({ op: native.ops.remove, path, recursive: true, force }, shown)
}
