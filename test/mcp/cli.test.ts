/**
 * `pinnedfs mcp` as a command: its help and usage errors, `--read-only` (only the read tools
 * listed, each as the reference lists it; the others refused and nothing written), `--sync`
 * (fsync calls counted with strace: none without it, as the reference makes none), and
 * `--max-entries` (a walk past the bound fails, naming it).
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { skipUnless } from "../support/skip.ts"
import { oursBin, type Server, start, startOurs, startReference, textOf } from "./support/servers.ts"
import { type Twins, twins } from "./support/twins.ts"

let t: Twins
beforeAll(() => {
  t = twins()
  t.make({ "a.txt": "a", "d/1": "", "d/2": "", "d/3/4": "" })
})
afterAll(() => t.cleanup())

const run = (args: ReadonlyArray<string>) => spawnSync(process.execPath, [oursBin(), ...args], { encoding: "utf8", input: "" })

describe("pinnedfs mcp, the command", () => {
  it("is listed in the bin's help, and explains its options", () => {
    const top = run(["--help"])
    expect(top.status).toBe(0)
    expect(top.stdout).toMatch(/mcp \[options\] \[directories\.\.\.\]/)
    const help = run(["mcp", "--help"])
    expect(help.status).toBe(0)
    for (const text of ["--read-only", "--sync", "--strategy <strategy>", "--max-entries <n>", "docs/mcp.md"])
      expect(help.stdout).toContain(text)
  })

  it("refuses a bad option as a usage error (exit 2)", () => {
    for (const args of [
      ["mcp", "--strategy", "sideways", t.ours],
      ["mcp", "--max-entries", "0", t.ours],
      ["mcp", "--frobnicate", t.ours]
    ]) {
      const r = run(args)
      expect({ args, status: r.status }).toEqual({ args, status: 2 })
      expect(r.stderr).toMatch(/error: /)
    }
  })
})

describe("--read-only", () => {
  let ours: Server
  let reference: Server
  beforeAll(async () => {
    ;[ours, reference] = await Promise.all([startOurs(["--read-only", t.ours]), startReference([t.reference])])
  }, 60_000)
  afterAll(async () => Promise.all([ours?.close(), reference?.close()]))

  it("lists only the read tools, each exactly as the reference lists it", async () => {
    const mine = await ours.client.listTools()
    const theirs = await reference.client.listTools()
    expect(mine.tools.map((tool) => tool.name)).toEqual([
      "read_file",
      "read_text_file",
      "read_media_file",
      "read_multiple_files",
      "list_directory",
      "list_directory_with_sizes",
      "directory_tree",
      "search_files",
      "get_file_info",
      "list_allowed_directories"
    ])
    expect(mine.tools).toEqual(theirs.tools.filter((tool) => tool.annotations?.readOnlyHint === true))
  })

  it("refuses every tool that changes files, and changes nothing", async () => {
    const before = fs.readdirSync(t.ours, { recursive: true }).sort()
    for (const [name, args] of [
      ["write_file", { path: `${t.ours}/new.txt`, content: "x" }],
      ["edit_file", { path: `${t.ours}/a.txt`, edits: [{ oldText: "a", newText: "b" }] }],
      ["create_directory", { path: `${t.ours}/made` }],
      ["move_file", { source: `${t.ours}/a.txt`, destination: `${t.ours}/b.txt` }]
    ] as const) {
      const r = await ours.call(name, args)
      expect(r.isError, name).toBe(true)
      expect(textOf(r)).toBe(`MCP error -32602: Tool ${name} disabled`)
    }
    expect(fs.readdirSync(t.ours, { recursive: true }).sort()).toEqual(before)
    expect(fs.readFileSync(path.join(t.ours, "a.txt"), "utf8")).toBe("a")
    expect(textOf(await ours.call("read_text_file", { path: `${t.ours}/a.txt` }))).toBe("a")
  })
})

describe("--sync and --max-entries", () => {
  const strace = spawnSync("strace", ["-V"]).status === 0

  /** fsync-family calls the server makes for one write_file, counted by strace around it. */
  const fsyncsForOneWrite = async (flags: ReadonlyArray<string>): Promise<number> => {
    const trace = path.join(t.base, `trace-${flags.length}.txt`)
    const s = await start(["-f", "-qq", "-e", "trace=fsync,fdatasync", "-o", trace, process.execPath, oursBin(), "mcp", ...flags, t.ours], {
      executable: "strace"
    })
    try {
      expect(textOf(await s.call("write_file", { path: `${t.ours}/synced.txt`, content: "x" }))).toBe(
        `Successfully wrote to ${t.ours}/synced.txt`
      )
    } finally {
      await s.close()
    }
    const text = fs.readFileSync(trace, "utf8")
    fs.rmSync(trace)
    return text.split("\n").filter((l) => /\b(fsync|fdatasync)\(/.test(l)).length
  }

  it("writes without fsync by default, as the reference, and fsyncs the file and its directory with --sync", async (ctx) => {
    skipUnless(ctx, strace, "strace is not installed")
    expect(await fsyncsForOneWrite([])).toBe(0)
    expect(await fsyncsForOneWrite(["--sync"])).toBe(2)
  }, 60_000)

  it("fails a walk past --max-entries, naming the bound", async () => {
    const s = await startOurs(["--max-entries", "4", t.ours])
    try {
      expect(textOf(await s.call("directory_tree", { path: `${t.ours}/d` }))).toContain('"name": "4"')
      const tree = await s.call("directory_tree", { path: t.ours })
      expect(tree.isError).toBe(true)
      expect(textOf(tree)).toBe(
        `directory_tree: more than 4 entries under ${t.ours} (pinnedfs bounds what one call walks; narrow the path or exclude more)`
      )
      expect(textOf(await s.call("search_files", { path: t.ours, pattern: "**/4" }))).toBe(
        `search_files: more than 4 entries under ${t.ours} (pinnedfs bounds what one call walks; narrow the path or exclude more)`
      )
    } finally {
      await s.close()
    }
  })
})
