/**
 * Drives the path-based extension the way a kernel does: identify the root once, then send every
 * request with the root triple stamped on. Each suite runs twice, once addressing the workspace by
 * its canonical (boundary) path and once through a logical root that is a link to it, since the
 * kernel may send either spelling.
 */
import { Effect, type PlatformError } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { expect } from "vitest"
import type { AtomicRequest } from "../../src/protocol/wire.ts"
import { PathAtomicFileSystem } from "../../src/fallback/index.ts"
import { type Scratch, scratch } from "../support/tree.ts"

export const spellings = ["boundary", "logical"] as const
export type Spelling = (typeof spellings)[number]

/** A request without its root triple, which {@link Harness.run} stamps on. */
export type Bare = { readonly operation: string } & Record<string, unknown>

export interface Harness {
  readonly s: Scratch
  readonly extension: ReturnType<typeof PathAtomicFileSystem.make>
  /** The root as requests spell it (the logical link, or the boundary itself). */
  readonly base: string
  /** `base` joined with a root-relative path. */
  readonly at: (relative: string) => string
  /** The canonical spelling of a root-relative path: how answers name things. */
  readonly canonical: (relative: string) => string
  readonly triple: { readonly boundaryRoot: string; readonly logicalRoot: string; readonly rootIdentity: string }
  readonly run: <A = unknown>(request: Bare) => Promise<A>
  readonly fail: (request: Bare) => Promise<PlatformError.PlatformError>
}

export const harness = async (
  spelling: Spelling,
  tree: Record<string, string> = {},
  options?: PathAtomicFileSystem.Options
): Promise<Harness> => {
  const s = scratch()
  s.make(tree)
  const boundaryRoot = fs.realpathSync(s.root)
  let logicalRoot = boundaryRoot
  if (spelling === "logical") {
    logicalRoot = path.join(path.dirname(s.root), "workspace-link")
    fs.symlinkSync(s.root, logicalRoot)
  }
  const extension = PathAtomicFileSystem.make(options)
  const rootIdentity = await Effect.runPromise(extension.identifyRoot!(logicalRoot))
  const triple = { boundaryRoot, logicalRoot, rootIdentity }
  const send = (request: Bare) => extension.execute({ ...triple, ...request } as unknown as AtomicRequest)
  return {
    s,
    extension,
    base: logicalRoot,
    at: (relative) => (relative === "" ? logicalRoot : path.join(logicalRoot, relative)),
    canonical: (relative) => (relative === "" ? boundaryRoot : path.join(boundaryRoot, relative)),
    triple,
    run: <A>(request: Bare) => Effect.runPromise(send(request)) as Promise<A>,
    fail: (request) => Effect.runPromise(Effect.flip(send(request)))
  }
}

/** Asserts the reason tag (and, for our own refusals, a word of the description). */
export const expectReason = (error: PlatformError.PlatformError, tag: string, says?: RegExp): void => {
  expect(error._tag).toBe("PlatformError")
  expect(error.reason._tag).toBe(tag)
  if (says !== undefined) expect(error.reason.description ?? "").toMatch(says)
}
