/**
 * The same calls on twin trees, one served by `pinnedfs mcp`, one by the reference server, both
 * driven by the SDK's `Client` over stdio: every answer (text, structuredContent, isError) must be
 * the same once each tree's path is replaced by `<ROOT>`, except the differences docs/mcp.md lists,
 * each asserted here as it is documented. The calls cover every tool, the reference's quirks
 * (head/tail edge cases, CRLF, the diff fence, size formatting and sorting, the tree JSON, glob
 * semantics with dot names and exclusions, get_file_info's lines) and its error texts. After the
 * writes, the two trees must hold the same files.
 *
 * Birth times cannot be made equal on two trees, so `created:` lines are masked; every other time
 * is set to the same instant before any call reads the trees.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { strategies } from "../support/strategies.ts"
import { type Server, startOurs, startReference } from "./support/servers.ts"
import { fixTimes, type Twins, twins } from "./support/twins.ts"

type Case = readonly [name: string, tool: string, args: Record<string, unknown>]

const big = Array.from({ length: 3000 }, (_, i) => `line ${i} ${"é".repeat(i % 7)}`).join("\n")

const layout: Record<string, string> = {
  "a.txt": "one\ntwo\nthree\n",
  "crlf.txt": "l1\r\nl2\r\nl3\r\n",
  "noeol.txt": "x\ny",
  "empty.txt": "",
  "big.txt": `${big}\n`,
  "utf8.txt": "héllo wörld ✓ 𝄞\nsecond ligne\n",
  "bom.txt": "\ufeffwith a byte order mark\n",
  "spaced name.txt": "spaces",
  "ünïcödé.txt": "composed",
  "cafe\u0301.txt": "decomposed",
  "code.ts": "function f() {\n    if (x) {\n        return 1\n    }\n}\n",
  "ticks.md": "text with ``` fence and ```` four\n",
  "image.png": "\x89PNG fake",
  "song.MP3": "ID3 fake",
  "doc.pdf": "%PDF fake",
  "sub/b.md": "# b",
  "sub/deep/c.md": "# c",
  "sub/deep/d.txt": "d",
  "sub/.hidden": "hidden",
  ".dotdir/x.md": "# x",
  "node_modules/pkg/index.js": "module.exports = 1",
  "node_modules/pkg/README.md": "# pkg",
  "emptydir/": "",
  "B-upper.txt": "upper",
  "a-lower.txt": "lower"
}

/** Calls that only read: run first, before anything changes the trees or their access times. */
const reads = (root: string): ReadonlyArray<Case> => {
  const p = (rel: string) => path.join(root, rel)
  return [
    ["info of a file", "get_file_info", { path: p("a.txt") }],
    ["info of a directory", "get_file_info", { path: p("sub") }],
    ["info of a missing path", "get_file_info", { path: p("missing") }],
    ["read whole", "read_text_file", { path: p("a.txt") }],
    ["read through the deprecated alias", "read_file", { path: p("a.txt") }],
    ["head 2", "read_text_file", { path: p("a.txt"), head: 2 }],
    ["head more than there is", "read_text_file", { path: p("a.txt"), head: 10 }],
    ["head 0 reads everything", "read_text_file", { path: p("a.txt"), head: 0 }],
    ["head negative", "read_text_file", { path: p("a.txt"), head: -1 }],
    ["head fractional", "read_text_file", { path: p("a.txt"), head: 1.5 }],
    ["tail 2", "read_text_file", { path: p("a.txt"), tail: 2 }],
    ["tail 1 of a file ending in a newline", "read_text_file", { path: p("a.txt"), tail: 1 }],
    ["tail fractional", "read_text_file", { path: p("a.txt"), tail: 1.5 }],
    ["tail negative", "read_text_file", { path: p("a.txt"), tail: -3 }],
    ["tail of a big file", "read_text_file", { path: p("big.txt"), tail: 5 }],
    ["tail between 0 and 1 of a big file", "read_text_file", { path: p("big.txt"), tail: 0.5 }],
    ["head of a big file", "read_text_file", { path: p("big.txt"), head: 3 }],
    ["tail of an empty file", "read_text_file", { path: p("empty.txt"), tail: 3 }],
    ["head of an empty file", "read_text_file", { path: p("empty.txt"), head: 3 }],
    ["CRLF head keeps CR", "read_text_file", { path: p("crlf.txt"), head: 2 }],
    ["CRLF tail drops CR", "read_text_file", { path: p("crlf.txt"), tail: 2 }],
    ["no final newline, head", "read_text_file", { path: p("noeol.txt"), head: 5 }],
    ["no final newline, tail", "read_text_file", { path: p("noeol.txt"), tail: 1 }],
    ["head and tail together", "read_text_file", { path: p("a.txt"), head: 1, tail: 1 }],
    ["UTF-8", "read_text_file", { path: p("utf8.txt") }],
    ["byte order mark kept", "read_text_file", { path: p("bom.txt") }],
    ["a name with spaces", "read_text_file", { path: p("spaced name.txt") }],
    ["composed name", "read_text_file", { path: p("ünïcödé.txt") }],
    ["decomposed name asked composed", "read_text_file", { path: p("café.txt") }],
    ["relative path", "read_text_file", { path: "a.txt" }],
    ["relative path with dot segments", "read_text_file", { path: "./sub/../a.txt" }],
    ["trailing slash", "list_directory", { path: `${p("sub")}/` }],
    ["missing file", "read_text_file", { path: p("missing.txt") }],
    ["missing file, tail", "read_text_file", { path: p("missing.txt"), tail: 1 }],
    ["a directory as a file", "read_text_file", { path: p("sub") }],
    ["a directory as a file, head", "read_text_file", { path: p("sub"), head: 1 }],
    ["a file on the way", "read_text_file", { path: p("a.txt/x") }],
    ["outside", "read_text_file", { path: "/etc/hostname" }],
    ["dot-dot out", "read_text_file", { path: p("../outside/secret.txt") }],
    ["relative dot-dot out", "read_text_file", { path: "../outside/secret.txt" }],
    ["a prefix sibling", "read_text_file", { path: `${root}-sibling/x` }],
    ["a Windows path", "read_text_file", { path: "C:\\Users\\x.txt" }],
    ["a NUL in the path", "read_text_file", { path: p("a\0.txt") }],
    ["head given as text", "read_text_file", { path: p("a.txt"), head: "2" }],
    ["no path", "read_text_file", {}],
    ["media: image", "read_media_file", { path: p("image.png") }],
    ["media: audio, upper-case extension", "read_media_file", { path: p("song.MP3") }],
    ["media: other", "read_media_file", { path: p("doc.pdf") }],
    ["media: missing", "read_media_file", { path: p("nope.png") }],
    ["many files", "read_multiple_files", { paths: [p("a.txt"), p("missing"), p("sub"), "/etc/hostname", "noeol.txt"] }],
    ["many files, none", "read_multiple_files", { paths: [] }],
    ["list the root", "list_directory", { path: root }],
    ["list a subdirectory", "list_directory", { path: p("sub") }],
    ["list an empty directory", "list_directory", { path: p("emptydir") }],
    ["list a file", "list_directory", { path: p("a.txt") }],
    ["list a missing path", "list_directory", { path: p("missing") }],
    ["sizes by name", "list_directory_with_sizes", { path: root }],
    ["sizes by size", "list_directory_with_sizes", { path: root, sortBy: "size" }],
    ["sizes, bad sort", "list_directory_with_sizes", { path: root, sortBy: "date" }],
    ["sizes of a subdirectory", "list_directory_with_sizes", { path: p("sub") }],
    ["tree", "directory_tree", { path: root }],
    ["tree, excluding a name", "directory_tree", { path: root, excludePatterns: ["node_modules"] }],
    ["tree, excluding a glob", "directory_tree", { path: root, excludePatterns: ["*.md", "**/deep"] }],
    ["tree of a relative path", "directory_tree", { path: "sub" }],
    ["tree of a file", "directory_tree", { path: p("a.txt") }],
    ["search **/*.md", "search_files", { path: root, pattern: "**/*.md" }],
    ["search *.txt", "search_files", { path: root, pattern: "*.txt" }],
    ["search dot names", "search_files", { path: root, pattern: "**/.*" }],
    ["search with exclusions", "search_files", { path: root, pattern: "**/*", excludePatterns: ["node_modules", "**/deep/**", "*.txt"] }],
    ["search a braces pattern", "search_files", { path: p("sub"), pattern: "{b.md,deep/c.md}" }],
    ["search, nothing found", "search_files", { path: root, pattern: "**/*.nothing" }],
    ["search a missing directory", "search_files", { path: p("missing"), pattern: "*" }],
    ["allowed directories", "list_allowed_directories", {}],
    ["an unknown tool", "no_such_tool", {}]
  ]
}

/** Calls that change the trees, in order. */
const writes = (root: string): ReadonlyArray<Case> => {
  const p = (rel: string) => path.join(root, rel)
  return [
    ["write a new file", "write_file", { path: p("new.txt"), content: "new\n" }],
    ["overwrite a file", "write_file", { path: p("a.txt"), content: "replaced\n" }],
    ["write under a missing directory", "write_file", { path: p("nope/x.txt"), content: "x" }],
    ["write under a file", "write_file", { path: p("a.txt/x"), content: "x" }],
    ["write outside", "write_file", { path: p("../outside/x.txt"), content: "x" }],
    ["write a relative path", "write_file", { path: "sub/rel.txt", content: "rel" }],
    ["edit exactly", "edit_file", { path: p("noeol.txt"), edits: [{ oldText: "y", newText: "why" }] }],
    [
      "edit line by line, keeping indentation",
      "edit_file",
      { path: p("code.ts"), edits: [{ oldText: "if (x) {\n  return 1\n}", newText: "if (y) {\n  return 2\n}" }] }
    ],
    [
      "edit twice in one call",
      "edit_file",
      {
        path: p("big.txt"),
        edits: [
          { oldText: "line 10 ", newText: "LINE TEN " },
          { oldText: "line 2999", newText: "last" }
        ]
      }
    ],
    ["edit, dry run", "edit_file", { path: p("utf8.txt"), edits: [{ oldText: "wörld", newText: "world" }], dryRun: true }],
    ["edit a CRLF file", "edit_file", { path: p("crlf.txt"), edits: [{ oldText: "l2\r\n", newText: "L2\n" }] }],
    ["edit with backticks in the diff", "edit_file", { path: p("ticks.md"), edits: [{ oldText: "four", newText: "4" }] }],
    ["edit that matches nothing", "edit_file", { path: p("empty.txt"), edits: [{ oldText: "zzz", newText: "y" }] }],
    ["edit a missing file", "edit_file", { path: p("missing.txt"), edits: [{ oldText: "a", newText: "b" }] }],
    ["edit a directory", "edit_file", { path: p("sub"), edits: [{ oldText: "a", newText: "b" }] }],
    ["edit, no edits", "edit_file", { path: p("spaced name.txt"), edits: [] }],
    ["create nested directories", "create_directory", { path: p("made/deep/er") }],
    ["create an existing directory", "create_directory", { path: p("sub") }],
    ["create over a file", "create_directory", { path: p("new.txt") }],
    ["create under a file", "create_directory", { path: p("new.txt/below") }],
    ["move a file", "move_file", { source: p("new.txt"), destination: p("moved.txt") }],
    ["move into a directory", "move_file", { source: p("moved.txt"), destination: p("made/moved.txt") }],
    ["move a directory", "move_file", { source: p("made/deep"), destination: p("deep2") }],
    ["move onto a file", "move_file", { source: p("B-upper.txt"), destination: p("a-lower.txt") }],
    ["move onto a directory", "move_file", { source: p("B-upper.txt"), destination: p("emptydir") }],
    ["move a missing file", "move_file", { source: p("missing"), destination: p("x") }],
    ["move outside", "move_file", { source: p("B-upper.txt"), destination: p("../outside/stolen") }],
    ["move from outside", "move_file", { source: p("../outside/secret.txt"), destination: p("stolen") }],
    ["tree after the writes", "directory_tree", { path: root }]
  ]
}

/**
 * Answers that differ, each documented in docs/mcp.md ("Differences"), keyed by case name: what
 * the reference answers, as a pattern, and what pinnedfs answers.
 */
const documented: Record<string, { readonly reference: RegExp; readonly ours: string }> = {
  // The reference writes a temporary file and renames it over the directory: its error names a random temporary name.
  "write a file onto a directory": {
    reference: /^EISDIR: illegal operation on a directory, rename '<ROOT>\/sub\.[0-9a-f]{32}\.tmp' -> '<ROOT>\/sub'$/,
    ours: "EISDIR: illegal operation on a directory, open '<ROOT>/sub'"
  }
}
const extraWrites = (root: string): ReadonlyArray<Case> => [
  ["write a file onto a directory", "write_file", { path: path.join(root, "sub"), content: "x" }]
]

/** Every entry below `dir`: file contents, "dir", link texts. */
const snapshot = (dir: string): Record<string, string> => {
  const out: Record<string, string> = {}
  const visit = (rel: string) => {
    for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name
      const st = fs.lstatSync(path.join(dir, r))
      if (st.isDirectory()) {
        out[r] = `dir ${(st.mode & 0o777).toString(8)}`
        visit(r)
      } else out[r] = `${fs.readFileSync(path.join(dir, r), "latin1")} ${(st.mode & 0o777).toString(8)}`
    }
  }
  visit("")
  return out
}

describe.each(strategies)("parity with the reference server (%s)", (strategy) => {
  let t: Twins
  let ours: Server
  let reference: Server
  beforeAll(async () => {
    t = twins()
    t.make(layout)
    t.both((root) => fs.mkdirSync(`${root}-sibling`))
    t.both(fixTimes)
    // Relative paths resolve against the first allowed directory: each server's own tree.
    ;[ours, reference] = await Promise.all([startOurs(["--strategy", strategy, t.ours]), startReference([t.reference])])
  }, 60_000)
  afterAll(async () => {
    await Promise.all([ours?.close(), reference?.close()])
    t?.cleanup()
  })

  const compare = async (cases: (root: string) => ReadonlyArray<Case>) => {
    const mine = cases(t.ours)
    const theirs = cases(t.reference)
    const mismatches: Array<unknown> = []
    for (let i = 0; i < mine.length; i++) {
      const [name, tool, args] = mine[i]!
      const a = t.normalize(await ours.call(tool, args), t.ours)
      const b = t.normalize(await reference.call(tool, theirs[i]![2]), t.reference)
      const known = documented[name]
      if (known !== undefined) {
        const text = (x: unknown) => (x as { content: Array<{ text: string }> }).content[0]?.text ?? ""
        expect(text(b), `${name}: the reference`).toMatch(known.reference)
        expect(text(a), `${name}: pinnedfs`).toBe(known.ours)
        continue
      }
      if (JSON.stringify(a) !== JSON.stringify(b)) mismatches.push({ name, tool, ours: a, reference: b })
    }
    expect(mismatches).toEqual([])
  }

  it("tools/list answers the same tools, schemas and annotations", async () => {
    const [a, b] = await Promise.all([ours.client.listTools(), reference.client.listTools()])
    expect(a.tools.length).toBe(14)
    expect(a).toEqual(b)
  })

  it("answers every read the same", async () => {
    await compare(reads)
  }, 120_000)

  it("answers every write the same and leaves the same files", async () => {
    await compare(writes)
    await compare(extraWrites)
    expect(snapshot(t.ours)).toEqual(snapshot(t.reference))
    expect(fs.readdirSync(t.outside)).toEqual(["secret.txt"])
  }, 120_000)
})
