/**
 * Helpers for the extension suites: a scratch workspace with both root spellings (a logical alias
 * that is a symlink to the canonical boundary directory), wire requests stamped with the root
 * triple, and a runner that answers an `Exit` so a test can look at either side.
 */
import { Cause, Effect, Exit, type PlatformError, Result } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { expect } from "vitest"
import { rootIdentityOf as rootIdentityFromStat } from "../../src/protocol/root.ts"
import type { AtomicFileSystem } from "../../src/protocol/wire.ts"
import { type Scratch, scratch } from "../support/tree.ts"

/** The extension under test, seen through its runtime surface (requests are untyped on the wire). */
export interface Host {
  readonly execute: (request: unknown) => Effect.Effect<unknown, PlatformError.PlatformError>
  readonly identifyRoot?: AtomicFileSystem["identifyRoot"]
  readonly batchLimits?: AtomicFileSystem["batchLimits"]
  readonly contentLimit?: AtomicFileSystem["contentLimit"]
}

export const host = (extension: AtomicFileSystem): Host => extension as unknown as Host

export interface Workspace {
  readonly s: Scratch
  /** Canonical path the root is pinned at. */
  readonly boundaryRoot: string
  /** A symlink to the workspace, as a caller may spell it. */
  readonly logicalRoot: string
  readonly rootIdentity: string
  readonly roots: { readonly boundaryRoot: string; readonly logicalRoot: string; readonly rootIdentity: string }
  /** Absolute path in the boundary spelling. */
  readonly b: (relative: string) => string
  /** Absolute path in the logical spelling. */
  readonly l: (relative: string) => string
  /** A wire request stamped with this workspace's roots. */
  readonly req: (operation: string, fields?: Record<string, unknown>) => Record<string, unknown>
}

/** A directory's `dev:ino`: what `mkdirs` records. */
export const identityOf = (p: string): string => {
  const st = fs.statSync(p, { bigint: true })
  return `${st.dev}:${st.ino}`
}

/**
 * A root's identity as the extension spells it (`dev:ino` and its birth time), from Node's stat:
 * the same text wherever the file system records birth times, as the test trees' do.
 */
export const rootIdentityOf = (p: string): string => rootIdentityFromStat(fs.statSync(p, { bigint: true }))

export const workspace = (spec: Record<string, string> = {}): Workspace => {
  const s = scratch()
  s.make(spec)
  const boundaryRoot = fs.realpathSync(s.root)
  const logicalRoot = path.join(path.dirname(boundaryRoot), "alias")
  fs.symlinkSync(boundaryRoot, logicalRoot)
  const rootIdentity = rootIdentityOf(boundaryRoot)
  const roots = { boundaryRoot, logicalRoot, rootIdentity }
  const at = (root: string) => (relative: string) => (relative === "" ? root : `${root}/${relative}`)
  return {
    s,
    boundaryRoot,
    logicalRoot,
    rootIdentity,
    roots,
    b: at(boundaryRoot),
    l: at(logicalRoot),
    req: (operation, fields = {}) => ({ operation, ...roots, ...fields })
  }
}

export const run = <A>(effect: Effect.Effect<A, PlatformError.PlatformError>) => Effect.runPromiseExit(effect)

/** Runs a request that must succeed, answering its value. */
export const ok = async (h: Host, request: unknown): Promise<any> => {
  const exit = await run(h.execute(request))
  if (Exit.isFailure(exit)) throw new Error(`expected success, got ${Cause.pretty(exit.cause)}`)
  return exit.value
}

/** Runs a request that must fail with a typed PlatformError (never a defect), answering it. */
export const failure = (h: Host, request: unknown): Promise<PlatformError.PlatformError> => failureOf(h.execute(request))

/** Runs an effect that must fail with a typed PlatformError (never a defect), answering it. */
export const failureOf = async (effect: Effect.Effect<unknown, PlatformError.PlatformError>): Promise<PlatformError.PlatformError> => {
  const exit = await run(effect)
  if (Exit.isSuccess(exit)) throw new Error(`expected failure, got ${JSON.stringify(exit.value)?.slice(0, 200)}`)
  const error = Cause.findErrorOption(exit.cause)
  if (error._tag === "None") throw new Error(`expected a typed failure, got ${Cause.pretty(exit.cause)}`)
  return error.value
}

/** Runs a request that must fail with reason `tag`, answering the error. */
export const refused = async (h: Host, request: unknown, tag: string): Promise<PlatformError.PlatformError> => {
  const error = await failure(h, request)
  expect(error.reason._tag, error.message).toBe(tag)
  return error
}

export const base64 = (text: string | Uint8Array): string => Buffer.from(text).toString("base64")

/** A batch entry's result: `"ok"`, or the failure's reason tag. */
export const tagOf = (result: Result.Result<unknown, PlatformError.PlatformError>): string =>
  Result.isFailure(result) ? result.failure.reason._tag : "ok"

/** A batch entry's success value (`{ operation, value }`), or a thrown error. */
export const valueOf = (result: Result.Result<any, PlatformError.PlatformError>): any => Result.getOrThrow(result)
