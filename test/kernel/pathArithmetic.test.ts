/**
 * The kernel's path arithmetic between the two root spellings takes a string shortcut for paths
 * plainly below a root (see `paths.ts`). The shortcut must give exactly what the arithmetic gives:
 * here both are computed for many generated roots and paths (the filesystem root, roots with
 * awkward names, paths with `.`, `..`, doubled and trailing separators, paths outside, paths that
 * share a prefix with the root without being below it), and compared. Nothing touches the disk.
 */
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import type { Path } from "effect"
import type { Root } from "../../src/protocol/root.ts"
import { childOf, isInside, isPlainRelative, logicalOf, toBoundary, toLogical } from "../../src/kernel/internal/paths.ts"
import { generator } from "./support/randomTrees.ts"

/** The arithmetic as it was written before the shortcut: the reference. */
const reference = {
  isInside: (root: string, candidate: string): boolean => {
    const relative = NodePath.relative(root, candidate)
    return relative === "" || (relative !== ".." && !relative.startsWith(`..${NodePath.sep}`) && !NodePath.isAbsolute(relative))
  },
  toBoundary: (root: Root<string | undefined>, value: string): string | undefined => {
    const base = reference.isInside(root.logicalRoot, value)
      ? root.logicalRoot
      : reference.isInside(root.boundaryRoot, value)
        ? root.boundaryRoot
        : undefined
    return base === undefined ? undefined : NodePath.join(root.boundaryRoot, NodePath.relative(base, value))
  },
  toLogical: (root: Root<string | undefined>, canonical: string): string =>
    NodePath.normalize(NodePath.join(root.logicalRoot, NodePath.relative(root.boundaryRoot, canonical))),
  logicalOf: (root: Root<string | undefined>, value: string): string => {
    const boundary = reference.toBoundary(root, value)
    return boundary === undefined ? NodePath.normalize(value) : reference.toLogical(root, boundary)
  }
}

const roots = ["/", "/ws", "/tmp/work space", "/a/b/c", "/ws.d", "/w[1]", "/ws/inner", "/ws-link", "/.hidden", "/x/"]
const segments = ["a", "b", ".", "..", "", "ws", "ws.d", "inner", "f.txt", "..a", ".b", "c d", "ws-link"]

describe("path arithmetic between the root spellings", () => {
  it("the shortcut for paths plainly below a root answers as the arithmetic does", () => {
    // The functions used here are Node's own under Effect's Path service.
    const effectPath = NodePath.posix as unknown as Path.Path
    const rng = generator(20261130)
    let below = 0
    for (let n = 0; n < 20_000; n++) {
      const logicalRoot = rng.pick(roots)
      const boundaryRoot = rng.next() < 0.5 ? logicalRoot : rng.pick(roots)
      const root: Root<string | undefined> = { logicalRoot, boundaryRoot, rootIdentity: "1:1" }
      const parts = Array.from({ length: rng.int(5) }, () => rng.pick(segments))
      const start = rng.pick([logicalRoot, boundaryRoot, "/", "/elsewhere"])
      const raw = `${start}/${parts.join("/")}`
      // Most callers hand in normalized paths; some arrive as written.
      const value = rng.next() < 0.8 ? NodePath.normalize(raw) : raw
      if (value.startsWith(`${logicalRoot}/`)) below += 1
      const got = {
        isInside: isInside(effectPath, logicalRoot, value),
        toBoundary: toBoundary(effectPath, root, value),
        toLogical: toLogical(effectPath, root, value),
        logicalOf: logicalOf(effectPath, root, value)
      }
      const want = {
        isInside: reference.isInside(logicalRoot, value),
        toBoundary: reference.toBoundary(root, value),
        toLogical: reference.toLogical(root, value),
        logicalOf: reference.logicalOf(root, value)
      }
      expect({ root, value, ...got }).toEqual({ root, value, ...want })
    }
    // The shortcut was taken often enough for the comparison to mean something.
    expect(below).toBeGreaterThan(5_000)
  })

  it("a name a listing may show without looking at it lies strictly below the listed directory", () => {
    // A listing's names are taken whole when the grants cover everything below the directory
    // (see `listing.ts`); that is only right for names that cannot reach the directory or above it.
    const effectPath = NodePath.posix as unknown as Path.Path
    const rng = generator(11)
    let plain = 0
    for (let i = 0; i < 20_000; i++) {
      const name = Array.from({ length: 1 + rng.int(3) }, () => rng.pick(segments)).join(rng.int(6) === 0 ? "//" : "/")
      const spelled = rng.int(8) === 0 ? `${name}/` : rng.int(8) === 0 ? `/${name}` : name
      const directory = effectPath.normalize(rng.pick(roots)).replace(/(.)\/$/, "$1")
      const joined = NodePath.join(directory, spelled)
      const below = directory === "/" ? "/" : `${directory}/`
      const strictlyBelowAsSpelled =
        joined.startsWith(below) &&
        joined.length > below.length &&
        joined === childOf(effectPath, directory, spelled) &&
        joined === `${below}${spelled}`
      // Only one way: a name not taken as plain goes the long way, which is always right.
      if (isPlainRelative(spelled)) {
        plain++
        expect({ directory, spelled, strictlyBelowAsSpelled }).toEqual({ directory, spelled, strictlyBelowAsSpelled: true })
      }
      if (spelled.split("/").includes("..")) expect({ spelled, plain: isPlainRelative(spelled) }).toEqual({ spelled, plain: false })
    }
    expect(plain).toBeGreaterThan(2_000)
  })
})
