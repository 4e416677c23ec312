/**
 * What a new user reads first: error messages in Node's shape (`ENOENT: no such file or directory,
 * open 'x'`), no empty tail after an input check, a clear word for `new PinnedRoot()`, and a root
 * path that stays meaningful after the process changes directory.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { PinnedRoot } from "../src/index.ts"
import { strategies } from "./support/strategies.ts"
import { scratch } from "./support/tree.ts"
import { rejection as failure } from "./support/rejection.ts"

describe.each(strategies)("error messages (%s)", (strategy) => {
  const setup = async () => {
    const s = scratch()
    s.make({ "src/a.ts": "a", "dir/x": "x" })
    return { s, root: await PinnedRoot.open(s.root, { strategy }) }
  }

  it("a kernel error carries libuv's description, the system call, the path and the root", async () => {
    const { root } = await setup()
    const e = await failure(root.readFile("src/nope.ts"))
    expect(e.code).toBe("ENOENT")
    expect(e.message).toBe(`ENOENT: no such file or directory, ${e.syscall} 'src/nope.ts' (root ${root.path})`)
    expect(e.root).toBe(root.path)
    const d = await failure(root.readFile("dir"))
    expect(d.message).toMatch(/^EISDIR: illegal operation on a directory, \w+ 'dir' \(root \/.+\)$/)
    await root.close()
  })

  it("an error about the root itself (empty path) ends at the system call, then names the root", async () => {
    const { root } = await setup()
    const e = await failure(root.readFile(""))
    expect(e.code).toBe("EISDIR")
    expect(e.message).toBe(`EISDIR: illegal operation on a directory, ${e.syscall} (root ${root.path})`)
    await root.close()
  })

  it("an input check says what was wrong, with no empty `, validate ''` tail", async () => {
    const { root } = await setup()
    const e = await failure(root.readFile(5 as unknown as string))
    expect(e.code).toBe("EINVAL")
    expect(e.message).toBe("EINVAL: path must be a string, got number")
    expect(e.root).toBe("")
    const empty = await failure(PinnedRoot.open(""))
    expect(empty.message).toBe("EINVAL: root directory must be a non-empty string")
    await root.close()
  })

  it("our own refusals keep their own description", async () => {
    const { root } = await setup()
    const e = await failure(root.readFile("../x"))
    expect(e.refusal).toBe("escape")
    expect(e.message).toMatch(/^EXDEV: path escapes the root: .*'\.\.\/x' \(root \/.+\)$/)
    await root.close()
  })
})

describe("constructing and naming a root", () => {
  it("`new PinnedRoot()` from JavaScript points at PinnedRoot.open", () => {
    const Construct = PinnedRoot as unknown as new (...args: Array<unknown>) => unknown
    expect(() => new Construct()).toThrow(new TypeError("PinnedRoot cannot be created with `new`: use `await PinnedRoot.open(directory)`"))
    // A forged handle is refused the same way: only open() holds the token.
    expect(() => new Construct(Symbol("PinnedRoot.open"), {}, 1, "/")).toThrow(TypeError)
  })

  it.for(strategies)("a relative root path is recorded absolute, as of the open call (%s)", async (strategy) => {
    const s = scratch()
    s.make({ "f.txt": "f" })
    const parent = path.dirname(s.root)
    const before = process.cwd()
    let root: PinnedRoot
    try {
      process.chdir(parent)
      root = await PinnedRoot.open(path.basename(s.root), { strategy })
    } finally {
      process.chdir(before)
    }
    expect(root.path).toBe(s.root)
    expect(path.isAbsolute(root.path)).toBe(true)
    expect(fs.readFileSync(path.join(root.path, "f.txt"), "utf8")).toBe("f")
    await root.close()
    // An absolute path is kept as given.
    const again = await PinnedRoot.open(s.root, { strategy })
    expect(again.path).toBe(s.root)
    await again.close()
  })
})
