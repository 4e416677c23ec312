/**
 * Acquiring a workspace: the files of a scope read from disk, the same way the re-read reads them.
 *
 * @since 0.1.0
 */
import type { PinnedRoot } from "../PinnedRoot.ts"
import { envelopeOf } from "./envelope.ts"
import { limitsOf, type Limits } from "./limits.ts"
import { reread } from "./reread.ts"
import { Workspace } from "./Workspace.ts"

/**
 * A new workspace holding every file the `scope` globs match on disk (listed without entering a
 * link, read in one batch trip). Files that cannot be held as text are `unreadable`, each with an
 * `ERROR` diagnostic.
 *
 * @since 0.1.0
 * @category constructors
 */
export const acquire = async (
  root: PinnedRoot,
  options: { readonly scope: ReadonlyArray<string>; readonly limits?: Partial<Limits> | undefined }
): Promise<Workspace> => {
  const ws = new Workspace()
  const envelope = envelopeOf({ name: "acquire", scope: options.scope, mayCreate: [] })
  await reread(root, ws, {
    envelope,
    snapshot: new Set(),
    withheld: new Set(),
    extra: [],
    mayCreate: () => true,
    source: "acquire",
    limits: limitsOf(options.limits)
  })
  return ws
}
