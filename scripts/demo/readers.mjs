// The readers the demo compares, each `read(relative) -> Promise<string>` over one workspace, plus
// how to describe what one of them threw. Loaded from ../../dist, which scripts/demo.mjs builds first.
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"

const dist = new URL("../../dist/", import.meta.url)

const load = (rel) => import(new URL(rel, dist).href)

/**
 * A reader the demo compares; `unavailable` (and no `read`) when this machine or build lacks it.
 * @typedef {{ name: string, read?: (relative: string) => Promise<string>, close?: () => void, unavailable?: string }} Reader
 * @returns {Reader}
 */

export const nodeReader = (workspace) => ({
  name: "node:fs/promises (no confinement)",
  read: async (rel) => (await fsp.readFile(path.join(workspace, rel))).toString()
})

/** @returns {Promise<Array<Reader>>} */
export const pinnedReaders = async (workspace) => {
  const { PinnedRoot } = await load("index.js")
  const out = []
  for (const strategy of ["openat2", "walk"]) {
    try {
      const root = await PinnedRoot.open(workspace, { strategy })
      out.push({
        name: `PinnedRoot (${root.strategy})`,
        read: async (rel) => (await root.readFile(rel)).toString(),
        close: () => root.close()
      })
    } catch (e) {
      out.push({ name: `PinnedRoot (${strategy})`, unavailable: `cannot pin: ${e.message}` })
    }
  }
  return out
}

/** A reader over an atomic host extension, driven the way the kernel drives it. */
const extensionReader = async (name, extension, workspace) => {
  const { Effect } = await import("effect")
  const boundaryRoot = fs.realpathSync(workspace)
  const rootIdentity = await Effect.runPromise(extension.identifyRoot(boundaryRoot))
  const triple = { boundaryRoot, logicalRoot: workspace, rootIdentity }
  return {
    name,
    ...(typeof extension.close === "function" ? { close: () => extension.close() } : {}),
    read: (rel) => Effect.runPromise(extension.execute({ ...triple, operation: "readFileString", path: path.join(workspace, rel) }))
  }
}

/** @returns {Promise<Reader>} */
export const fallbackReader = async (workspace) => {
  const { PathAtomicFileSystem } = await load("fallback/index.js")
  return extensionReader("PathAtomicFileSystem (path-based fallback)", PathAtomicFileSystem.make(), workspace)
}

/**
 * The native extension (`pinnedfs/effect`) under both strategies, driven as the kernel drives it.
 * @returns {Promise<Array<Reader>>}
 */
export const nativeExtensionReaders = async (workspace) => {
  let NodeAtomicFileSystem
  try {
    ;({ NodeAtomicFileSystem } = await load("effect/index.js"))
  } catch (e) {
    return [{ name: "NodeAtomicFileSystem", unavailable: `cannot load pinnedfs/effect: ${e?.message ?? e}` }]
  }
  const out = []
  for (const strategy of ["openat2", "walk"]) {
    try {
      out.push(await extensionReader(`NodeAtomicFileSystem (${strategy})`, NodeAtomicFileSystem.make({ strategy }), workspace))
    } catch (e) {
      out.push({ name: `NodeAtomicFileSystem (${strategy})`, unavailable: String(e?.message ?? e) })
    }
  }
  return out
}

/** One line for what a reader threw: the typed fields a program would branch on. */
export const describeError = (e) => {
  if (e?.name === "PinnedFsError") {
    return `${e.name} code=${e.code} refusal=${e.refusal} reason=${e.reason}: ${e.description}`
  }
  if (e?._tag === "PlatformError") {
    const r = e.reason
    return `PlatformError ${r._tag}${r.syscall ? ` (${r.syscall})` : ""}: ${r.description ?? r.message ?? ""}`
  }
  return `${e?.code ?? e?.name ?? "Error"}: ${e?.message ?? e}`
}

/** Whether an error is a refusal of ours (a link met), as opposed to "missing mid-swap". */
export const isRefusal = (e) =>
  (e?.name === "PinnedFsError" && e.reason === "PermissionDenied") || (e?._tag === "PlatformError" && e.reason?._tag === "PermissionDenied")
