import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { PinnedRoot } from "../src/index.ts"
import { strategies } from "./support/strategies.ts"
import { scratch } from "./support/tree.ts"

describe.each(strategies)("stat through statx (%s)", (strategy) => {
  it("reports the birth time and the identity node:fs reports, for files, directories and links", async () => {
    const s = scratch()
    s.make({ "a/file.txt": "hello" })
    fs.symlinkSync(s.secret, s.abs("a/link"))
    const root = await PinnedRoot.open(s.root, { strategy })
    for (const p of ["a/file.txt", "a", "a/link", ""]) {
      const mine = await root.stat(p)
      const node = fs.lstatSync(s.abs(p), { bigint: true })
      // Node reads birthtime through statx too; 0 there means the file system keeps none (0 here too).
      const nodeBirth = Number(node.birthtimeNs) / 1e6
      if (nodeBirth === 0) expect(mine.birthtimeMs).toBe(0)
      else expect(mine.birthtimeMs).toBeCloseTo(nodeBirth, 3)
      expect(mine.dev).toBe(Number(node.dev))
      expect(mine.ino).toBe(Number(node.ino))
      expect(mine.nlink).toBe(Number(node.nlink))
      expect(mine.mode).toBe(Number(node.mode))
      expect(mine.size).toBe(Number(node.size))
      expect(mine.mtimeMs).toBeCloseTo(Number(node.mtimeNs) / 1e6, 3)
    }
    expect((await root.stat("a/link")).type).toBe("SymbolicLink")
  })
})
