import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { isWithin } from "../../src/mcp/spelling.ts"

// The containment test as the reference writes it: both sides through path.normalize and
// path.resolve. isWithin skips those two calls for a path they would not change; the answers must
// be the same for every spelling, dot components, doubled and trailing slashes included.
const reference = (candidate: string, dirs: ReadonlyArray<string>): boolean => {
  if (candidate === "" || dirs.length === 0 || candidate.includes("\0")) return false
  const target = path.resolve(path.normalize(candidate))
  return dirs.some((dir) => {
    if (dir === "" || dir.includes("\0")) return false
    const d = path.resolve(path.normalize(dir))
    if (target === d) return true
    if (d === "/") return target.startsWith("/")
    return target.startsWith(`${d}/`)
  })
}

const pieces = ["/", "//", ".", "..", "...", "a", "b", ".a", "..a", "a.", " ", '"']
const spellings = (depth: number, prefix: string): Array<string> =>
  depth === 0 ? [prefix] : [prefix, ...pieces.flatMap((p) => spellings(depth - 1, prefix + p))]

describe("isWithin", () => {
  it("answers as the reference's normalize-and-resolve comparison for every spelling", () => {
    const candidates = [...spellings(4, "/"), ...spellings(2, ""), "/a\0/b"]
    const dirSets = [["/"], ["/a"], ["/a/"], ["/a/./b"], ["/a//b", "/b"], ["/a/.."], ["a"], [""], ["/a."]]
    let compared = 0
    for (const dirs of dirSets) {
      for (const c of candidates) {
        expect.soft(isWithin(c, dirs), `${JSON.stringify(c)} in ${JSON.stringify(dirs)}`).toBe(reference(c, dirs))
        compared++
      }
    }
    expect(compared).toBeGreaterThan(100_000)
  })
})
