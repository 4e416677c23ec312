/**
 * `pinnedfs/effect` as published (package.json `exports`): checks that the optional peers `effect`
 * and `@effect/platform-node` are installed, then re-exports `../effect/index.ts`. Types come from
 * that module's declarations directly.
 *
 * @internal
 */
import type * as Api from "../effect/index.ts"
import { loadWithPeers } from "./peers.ts"

const api = loadWithPeers<typeof Api>({
  entry: "pinnedfs/effect",
  peers: ["effect", "@effect/platform-node"],
  from: import.meta.url,
  resolve: (specifier) => import.meta.resolve(specifier),
  implementation: "../effect/index.js"
})

export const { AtomicFileSystemTypeId, NodeAtomicFileSystem, withAtomicFileSystem } = api

// Fails to compile when ../effect/index.ts gains a value export this list does not carry.
type Missing = Exclude<keyof typeof Api, "AtomicFileSystemTypeId" | "NodeAtomicFileSystem" | "withAtomicFileSystem">
type Exhaustive<T extends never> = T
export type Unlisted = Exhaustive<Missing>
