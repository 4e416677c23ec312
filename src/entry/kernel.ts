/**
 * `pinnedfs/kernel` as published (package.json `exports`): checks that the optional peers `effect`
 * and `@effect/platform-node` are installed, then re-exports `../kernel/index.ts`. Types come from
 * that module's declarations directly.
 *
 * @internal
 */
import type * as Api from "../kernel/index.ts"
import { loadWithPeers } from "./peers.ts"

const api = loadWithPeers<typeof Api>({
  entry: "pinnedfs/kernel",
  peers: ["effect", "@effect/platform-node"],
  from: import.meta.url,
  resolve: (specifier) => import.meta.resolve(specifier),
  implementation: "../kernel/index.js"
})

export const { FileSystemBatch, FileSystemFault, GrantStore, KernelFileSystem, Permission, Workspace } = api

// Fails to compile when ../kernel/index.ts gains a value export this list does not carry.
type Missing = Exclude<
  keyof typeof Api,
  "FileSystemBatch" | "FileSystemFault" | "GrantStore" | "KernelFileSystem" | "Permission" | "Workspace"
>
type Exhaustive<T extends never> = T
export type Unlisted = Exhaustive<Missing>
