/**
 * `pinnedfs/fallback` as published (package.json `exports`): checks that the optional peers
 * `effect` and `@effect/platform-node` are installed, then re-exports `../fallback/index.ts`.
 * Types come from that module's declarations directly.
 *
 * @internal
 */
import type * as Api from "../fallback/index.ts"
import { loadWithPeers } from "./peers.ts"

const api = loadWithPeers<typeof Api>({
  entry: "pinnedfs/fallback",
  peers: ["effect", "@effect/platform-node"],
  from: import.meta.url,
  resolve: (specifier) => import.meta.resolve(specifier),
  implementation: "../fallback/index.js"
})

export const { PathAtomicFileSystem } = api

// Fails to compile when ../fallback/index.ts gains a value export this list does not carry.
type Missing = Exclude<keyof typeof Api, "PathAtomicFileSystem">
type Exhaustive<T extends never> = T
export type Unlisted = Exhaustive<Missing>
