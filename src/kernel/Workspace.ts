/**
 * The workspace the kernel guards: the directory every grant is written against.
 *
 * @since 0.1.0
 */
import { Context, Layer } from "effect"

/**
 * The workspace root, as the program spells it. It may be reached through a symlink: the kernel
 * pins the directory it names once, at composition, and keeps this spelling in every capability.
 *
 * @since 0.1.0
 * @category services
 */
export class Workspace extends Context.Service<Workspace, { readonly root: string }>()("pinnedfs/kernel/Workspace") {}

/**
 * A workspace at `root`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (root: string): Layer.Layer<Workspace> => Layer.succeed(Workspace, { root })
