/**
 * Allowed directories as the reference has them, pinned: several arguments, a symlinked argument
 * under both spellings, a missing one skipped with a warning, none usable → exit at start-up; the
 * client's roots replacing the arguments at initialization and again on `roots/list_changed`. Where
 * the reference and pinnedfs should agree, both run and their answers are compared. Then what
 * pinnedfs adds: a directory replaced, moved away or re-pointed mid-session is refused by its
 * identity, never followed, and a root the client withdrew is no longer reachable.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { strategies } from "../support/strategies.ts"
import { type Server, startOurs, startReference, textOf } from "./support/servers.ts"
import { type Twins, twins } from "./support/twins.ts"

const opened: Array<Server> = []
const made: Array<Twins> = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()))
  for (const t of made.splice(0)) t.cleanup()
})
const tree = (): Twins => {
  const t = twins()
  made.push(t)
  return t
}
const keep = async (s: Promise<Server>): Promise<Server> => {
  const server = await s
  opened.push(server)
  return server
}

/** Until the server says something matching `pattern` on stderr: roots are fetched after initialization. */
const saidOnStderr = async (s: Server, pattern: RegExp): Promise<void> => {
  const deadline = Date.now() + 20_000
  while (!pattern.test(s.stderr())) {
    if (Date.now() > deadline) throw new Error(`the server never said ${pattern}: ${s.stderr()}`)
    await s.call("list_allowed_directories")
  }
}

const identityRefusal = (spelling: string) =>
  new RegExp(
    `^Access denied - allowed directory replaced: ${spelling.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} no longer names the directory pinned when it was allowed`
  )

describe.each(strategies)("allowed directories and roots (%s)", (strategy) => {
  const ours = (args: ReadonlyArray<string>, options?: Parameters<typeof startOurs>[1]) =>
    keep(startOurs(["--strategy", strategy, ...args], options))
  const reference = (args: ReadonlyArray<string>, options?: Parameters<typeof startReference>[1]) => keep(startReference(args, options))

  it("takes several directories, a symlinked one under both spellings, and skips a missing one with a warning", async () => {
    const t = tree()
    const dirs = (root: string) => {
      fs.mkdirSync(path.join(root, "one"))
      fs.mkdirSync(path.join(root, "two"))
      fs.writeFileSync(path.join(root, "two", "f.txt"), "in two")
      fs.symlinkSync(path.join(root, "two"), path.join(root, "link"))
      return [path.join(root, "one"), path.join(root, "link"), path.join(root, "missing")]
    }
    const [a, b] = await Promise.all([ours(dirs(t.ours)), reference(dirs(t.reference))])
    for (const [s, root] of [
      [a, t.ours],
      [b, t.reference]
    ] as const) {
      expect(textOf(await s.call("list_allowed_directories"))).toBe(`Allowed directories:\n${root}/one\n${root}/link\n${root}/two`)
      expect(textOf(await s.call("read_text_file", { path: `${root}/link/f.txt` }))).toBe("in two")
      expect(textOf(await s.call("read_text_file", { path: `${root}/two/f.txt` }))).toBe("in two")
      // Relative to the first directory.
      expect(textOf(await s.call("read_text_file", { path: "../two/f.txt" }))).toBe("in two")
      expect(s.stderr()).toContain(`Warning: Cannot access directory ${root}/missing, skipping`)
    }
    expect(a.stderr()).toContain("pinned")
  })

  it("exits at start-up when no directory is usable, as the reference does", async () => {
    const t = tree()
    fs.writeFileSync(path.join(t.base, "file"), "")
    for (const start of [startOurs, startReference]) {
      const failed = await start([path.join(t.base, "nope"), path.join(t.base, "file")]).then(
        () => "started",
        (e: unknown) => (e instanceof Error ? e.message : String(e))
      )
      expect(failed).not.toBe("started")
    }
    // What it says on the way out, from a plain child process.
    const { spawnSync } = await import("node:child_process")
    const { oursBin } = await import("./support/servers.ts")
    const r = spawnSync(process.execPath, [oursBin(), "mcp", path.join(t.base, "nope"), path.join(t.base, "file")], {
      encoding: "utf8",
      input: ""
    })
    expect(r.status).toBe(1)
    expect(r.stderr).toContain(`Warning: Cannot access directory ${path.join(t.base, "nope")}, skipping`)
    expect(r.stderr).toContain(`Warning: ${path.join(t.base, "file")} is not a directory, skipping`)
    expect(r.stderr).toContain("Error: None of the specified directories are accessible")
  })

  it("without directories and without roots, says why and exits 1 (the reference dies of an unhandled rejection)", async () => {
    const s = await keep(startOurs(["--strategy", strategy]))
    expect(await s.exited).toBe(1)
    expect(s.stderr()).toContain("Server cannot operate: No allowed directories available.")
  })

  it("replaces the arguments with the client's roots, and again on roots/list_changed", async () => {
    const t = tree()
    const layout = (root: string) => {
      for (const d of ["arg", "r1", "r2"]) fs.mkdirSync(path.join(root, d))
      fs.writeFileSync(path.join(root, "arg", "a.txt"), "arg")
      fs.writeFileSync(path.join(root, "r1", "a.txt"), "r1")
      fs.writeFileSync(path.join(root, "r2", "a.txt"), "r2")
      fs.writeFileSync(path.join(root, "file"), "")
      return {
        args: [path.join(root, "arg")],
        roots: [
          { uri: pathToFileURL(path.join(root, "r1")).href, name: "r1" },
          { uri: pathToFileURL(path.join(root, "gone")).href },
          { uri: pathToFileURL(path.join(root, "file")).href }
        ]
      }
    }
    const mine = layout(t.ours)
    const theirs = layout(t.reference)
    const [a, b] = await Promise.all([ours(mine.args, { roots: mine.roots }), reference(theirs.args, { roots: theirs.roots })])
    for (const [s, root] of [
      [a, t.ours],
      [b, t.reference]
    ] as const) {
      await saidOnStderr(s, /Updated allowed directories from MCP roots: 1 valid directories/)
      expect(textOf(await s.call("list_allowed_directories"))).toBe(`Allowed directories:\n${root}/r1`)
      expect(textOf(await s.call("read_text_file", { path: "a.txt" }))).toBe("r1")
      expect(textOf(await s.call("read_text_file", { path: `${root}/arg/a.txt` }))).toMatch(
        /^Access denied - path outside allowed directories: /
      )
      expect(s.stderr()).toContain(`Skipping invalid path or inaccessible: file://${root}/gone`)
      expect(s.stderr()).toContain(`Skipping non-directory root: ${root}/file`)
      await s.setRoots([{ uri: pathToFileURL(path.join(root, "r2")).href }])
      await saidOnStderr(
        s,
        /Updated allowed directories from MCP roots: 1 valid directories[\s\S]*Updated allowed directories from MCP roots/
      )
      expect(textOf(await s.call("list_allowed_directories"))).toBe(`Allowed directories:\n${root}/r2`)
      expect(textOf(await s.call("read_text_file", { path: "a.txt" }))).toBe("r2")
      expect(textOf(await s.call("read_text_file", { path: `${root}/r1/a.txt` }))).toMatch(
        /^Access denied - path outside allowed directories: /
      )
      // No valid root: the current ones stay.
      await s.setRoots([{ uri: pathToFileURL(path.join(root, "gone")).href }])
      await saidOnStderr(s, /No valid root directories provided by client/)
      expect(textOf(await s.call("read_text_file", { path: "a.txt" }))).toBe("r2")
    }
  })

  it("starts without directories and takes the client's roots", async () => {
    const t = tree()
    fs.writeFileSync(path.join(t.ours, "a.txt"), "from roots")
    const s = await ours([], { roots: [{ uri: pathToFileURL(t.ours).href }] })
    await saidOnStderr(s, /Updated allowed directories from MCP roots/)
    expect(textOf(await s.call("read_text_file", { path: "a.txt" }))).toBe("from roots")
  })

  it("refuses a directory replaced mid-session by identity, where the reference follows the path to the new one", async () => {
    const t = tree()
    t.make({ "work/a.txt": "original" })
    const [a, b] = await Promise.all([ours([path.join(t.ours, "work")]), reference([path.join(t.reference, "work")])])
    t.both((root) => {
      fs.renameSync(path.join(root, "work"), path.join(root, "work.old"))
      fs.mkdirSync(path.join(root, "work"))
      fs.writeFileSync(path.join(root, "work", "a.txt"), "impostor")
    })
    expect(textOf(await b.call("read_text_file", { path: `${t.reference}/work/a.txt` }))).toBe("impostor")
    for (const call of [
      ["read_text_file", { path: `${t.ours}/work/a.txt` }],
      ["write_file", { path: `${t.ours}/work/b.txt`, content: "x" }],
      ["list_directory", { path: `${t.ours}/work` }],
      ["create_directory", { path: `${t.ours}/work/d` }],
      ["move_file", { source: `${t.ours}/work/a.txt`, destination: `${t.ours}/work/c.txt` }],
      ["get_file_info", { path: `${t.ours}/work/a.txt` }],
      ["search_files", { path: `${t.ours}/work`, pattern: "*" }],
      ["directory_tree", { path: `${t.ours}/work` }],
      ["edit_file", { path: `${t.ours}/work/a.txt`, edits: [{ oldText: "impostor", newText: "x" }] }],
      ["read_media_file", { path: `${t.ours}/work/a.txt` }]
    ] as const) {
      expect(textOf(await a.call(call[0], call[1])), call[0]).toMatch(identityRefusal(`${t.ours}/work`))
    }
    expect(fs.readdirSync(path.join(t.ours, "work"))).toEqual(["a.txt"])
    expect(fs.readdirSync(path.join(t.ours, "work.old"))).toEqual(["a.txt"])
    expect(fs.readFileSync(path.join(t.ours, "work", "a.txt"), "utf8")).toBe("impostor")
    // Moved away and not replaced: refused the same way, the directory that left is not touched.
    fs.rmSync(path.join(t.ours, "work"), { recursive: true })
    expect(textOf(await a.call("write_file", { path: `${t.ours}/work/new.txt`, content: "x" }))).toMatch(identityRefusal(`${t.ours}/work`))
    expect(fs.readdirSync(path.join(t.ours, "work.old"))).toEqual(["a.txt"])
  })

  it("refuses through a symlinked spelling re-pointed elsewhere, and keeps serving the real path", async () => {
    const t = tree()
    t.make({ "real/a.txt": "real", "other/a.txt": "other" })
    fs.symlinkSync(path.join(t.ours, "real"), path.join(t.ours, "link"))
    const s = await ours([path.join(t.ours, "link")])
    expect(textOf(await s.call("read_text_file", { path: `${t.ours}/link/a.txt` }))).toBe("real")
    fs.rmSync(path.join(t.ours, "link"))
    fs.symlinkSync(path.join(t.ours, "other"), path.join(t.ours, "link"))
    expect(textOf(await s.call("read_text_file", { path: `${t.ours}/link/a.txt` }))).toMatch(identityRefusal(`${t.ours}/link`))
    expect(textOf(await s.call("read_text_file", { path: `${t.ours}/real/a.txt` }))).toBe("real")
  })

  it("answers calls in flight across a roots change from the old root or refuses them, and refuses the old root after", async () => {
    const t = tree()
    t.make({ "r1/a.txt": "r1", "r2/a.txt": "r2" })
    const s = await ours([], { roots: [{ uri: pathToFileURL(path.join(t.ours, "r1")).href }] })
    await saidOnStderr(s, /Updated allowed directories from MCP roots/)
    // Many calls in flight while the roots change: each answers from r1 or is refused, never anything else.
    const calls = Array.from({ length: 40 }, () => s.call("read_text_file", { path: `${t.ours}/r1/a.txt` }))
    await s.setRoots([{ uri: pathToFileURL(path.join(t.ours, "r2")).href }])
    const answers = (await Promise.all(calls)).map(textOf)
    for (const a of answers) expect(a).toMatch(/^(r1|Access denied - .*)$/)
    await saidOnStderr(s, /Updated allowed directories from MCP roots[\s\S]*Updated allowed directories from MCP roots/)
    expect(textOf(await s.call("read_text_file", { path: `${t.ours}/r1/a.txt` }))).toMatch(
      /^Access denied - path outside allowed directories: /
    )
  })
})
