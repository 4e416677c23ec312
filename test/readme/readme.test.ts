/**
 * The documentation's own code, run: every ```ts / ```js block in README.md and in docs/*.md,
 * taken from the text as it is now, runs as an ES module in an empty scratch directory, so an
 * example that no longer compiles, throws, needs a file it does not make, or no longer does what
 * it shows fails here. New blocks and new pages are picked up by themselves.
 *
 * The conventions (the README says them in a comment at its top):
 * - a block whose info string carries `fragment` (```ts fragment) is a listing, not a program,
 *   and does not run; every other ts/js block must; every block names its language;
 * - "/home/me/project" in a block names the directory it runs in, which is empty: an example
 *   makes what it reads;
 * - imports of "pinnedfs" and its subpaths run the sources: each `exports` entry of package.json
 *   maps dist/<x>.js back to src/<x>.ts;
 * - a comment right before a block may name checks below that run after it,
 *   `<!-- readme-test check: name -->` (a check sees the directory and the block's top-level
 *   bindings), and what it needs, `<!-- readme-test needs: bubblewrap -->` (without it the block is
 *   skipped, saying why). Other comments between them and the block are allowed.
 * After every block the outside of its directory must be as it was.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { Option } from "effect"
import ts from "typescript"
import { afterAll, describe, expect, it } from "vitest"
import { sandboxAvailable } from "../../src/confine/index.ts"
import { snapshot } from "../support/attacker.ts"
import { skipUnless } from "../support/skip.ts"
import { scratch, type Scratch } from "../support/tree.ts"

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const pages = [
  "README.md",
  ...fs
    .readdirSync(path.join(repo, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`)
]
const text = (page: string) => fs.readFileSync(path.join(repo, page), "utf8")

type Check = (s: Scratch, bindings: Record<string, unknown>) => void

/** Checks a block may ask for by name, for what its comments claim. */
const checks: Record<string, Check> = {
  // PinnedRoot's example writes out/report.txt, reads it back, and is refused a path above the root.
  "promise-api": (s, b) => {
    expect(fs.readFileSync(s.abs("out/report.txt"), "utf8")).toBe("all clear\n")
    expect(b["text"]).toBe("all clear\n")
    expect(b["refused"]).toBe("PermissionDenied")
  },
  "promise-surface": (s, b) => {
    expect(fs.readFileSync(s.abs("notes.bak"), "utf8")).toBe("one\ntwo\n")
    expect(fs.readlinkSync(s.abs("latest"))).toBe("notes.txt")
    expect((b["info"] as { isFile(): boolean; size: number }).isFile()).toBe(true)
    expect((b["info"] as { size: number }).size).toBe(8)
    expect(b["names"]).toEqual(["latest", "notes.bak", "notes.txt"])
  },
  // The kernel example's formatter trims src/*.ts, never reads secrets/ or .env, and the read of
  // .env comes back as the kernel's PermissionDenied.
  "kernel-formatter": (s, b) => {
    expect(fs.readFileSync(s.abs("src/index.ts"), "utf8")).toBe("export const answer = 42\n")
    expect(fs.readFileSync(s.abs("src/util.ts"), "utf8")).toBe("export const twice = (n: number) => 2 * n\n")
    expect(fs.readFileSync(s.abs("secrets/key.ts"), "utf8")).toBe('export const key = "KEY"\n')
    // A .ts file outside src/: listed, read, and left alone.
    expect(fs.readFileSync(s.abs("test/a.test.ts"), "utf8")).toBe("export {}  \n")
    const result = b["result"] as { readonly seen: ReadonlyArray<string>; readonly refusal: unknown }
    const seen = result.seen.map((f) => path.relative(s.root, path.resolve(s.root, f))).sort()
    expect(seen).toEqual(["src/index.ts", "src/util.ts", "test/a.test.ts"])
    const refusal = result.refusal as Option.Option<{
      readonly _tag: string
      readonly reason: string
      readonly capability: { readonly resource: string }
    }>
    expect(Option.isOption(refusal)).toBe(true)
    expect(Option.map(refusal, (e) => [e._tag, e.reason, e.capability.resource])).toEqual(
      Option.some(["PermissionDenied", "denied by rule", s.abs(".env")])
    )
  }
}

/** What a block may need, and how the test finds out whether this machine has it. */
const needs: Record<string, () => Promise<string | undefined>> = {
  bubblewrap: async () => {
    const sandbox = await sandboxAvailable()
    return sandbox.available ? undefined : `no sandbox here: ${sandbox.reason}`
  }
}

interface Block {
  readonly page: string
  /** 1-based line of the opening fence. */
  readonly line: number
  readonly lang: string
  readonly flags: ReadonlyArray<string>
  readonly code: string
  readonly checks: ReadonlyArray<string>
  readonly needs: ReadonlyArray<string>
}

const RUNNABLE = new Set(["ts", "typescript", "js", "javascript", "mjs"])

/** Every fenced block of a page with its info string and the readme-test comments before it. */
const blocks = (page: string): Array<Block> => {
  const lines = text(page).split("\n")
  const out: Array<Block> = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)(.*)$/.exec(lines[i]!)
    if (!open) continue
    const end = lines.findIndex((l, j) => j > i && l.startsWith("```"))
    if (end < 0) throw new Error(`${page}:${i + 1}: a code block that never closes`)
    // The comments directly above the fence (blank lines between are allowed).
    const wanted: Array<string> = []
    const needed: Array<string> = []
    for (let j = i - 1; j >= 0 && (lines[j]!.trim() === "" || /^<!--.*-->$/.test(lines[j]!.trim())); j--) {
      if (!lines[j]!.startsWith("<!-- readme-test")) continue
      const note = /^<!-- readme-test (check|needs): (.*) -->$/.exec(lines[j]!.trim())
      if (!note) throw new Error(`${page}:${j + 1}: a readme-test comment this test does not read`)
      const names = note[2]!.split(",").map((c) => c.trim())
      if (note[1] === "check") wanted.push(...names)
      else needed.push(...names)
    }
    out.push({
      page,
      line: i + 1,
      lang: open[1]!,
      flags: open[2]!.trim().split(/\s+/).filter(Boolean),
      code: lines.slice(i + 1, end).join("\n"),
      checks: wanted,
      needs: needed
    })
    i = end
  }
  return out
}

/**
 * package.json's exports as specifier -> source file: "pinnedfs/effect" -> src/effect/index.ts.
 * `types` names the implementation; `default` may be an entry point that checks optional peers and
 * then loads the compiled implementation (src/entry), which has no source form to run.
 */
const sources = (() => {
  const pkg = JSON.parse(fs.readFileSync(path.join(repo, "package.json"), "utf8")) as {
    readonly name: string
    readonly exports: Record<string, string | { readonly types?: string; readonly default?: string }>
  }
  const out = new Map<string, string>()
  for (const [sub, target] of Object.entries(pkg.exports)) {
    const file = typeof target === "string" ? target : (target.types?.replace(/\.d\.ts$/, ".js") ?? target.default)
    if (!file?.startsWith("./dist/") || !file.endsWith(".js")) continue
    const source = path.join(repo, "src", file.slice("./dist/".length).replace(/\.js$/, ".ts"))
    out.set(sub === "." ? pkg.name : `${pkg.name}/${sub.slice(2)}`, source)
  }
  return out
})()

/** The block as a module: the workspace path in, the package's specifiers pointed at the sources,
 * and its top-level bindings exported as `__readme` for the checks. */
const moduleOf = (block: Block, root: string): string => {
  let code = block.code.replaceAll("/home/me/project", root)
  code = code.replace(/(from\s+|import\s*\(\s*)(["'])([^"']+)\2/g, (whole, lead: string, quote: string, spec: string) => {
    const source = sources.get(spec)
    return source === undefined ? whole : `${lead}${quote}${source}${quote}`
  })
  const file = ts.createSourceFile("block.ts", code, ts.ScriptTarget.ES2022, false, ts.ScriptKind.TS)
  const names: Array<string> = []
  for (const statement of file.statements) {
    if (ts.isVariableStatement(statement)) {
      for (const d of statement.declarationList.declarations) if (ts.isIdentifier(d.name)) names.push(d.name.text)
    } else if ((ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement)) && statement.name) {
      names.push(statement.name.text)
    }
  }
  return `${code}\nexport const __readme = { ${names.join(", ")} }\n`
}

const all = pages.flatMap(blocks)
const runnable = all.filter((b) => RUNNABLE.has(b.lang) && !b.flags.includes("fragment"))

// Block files live under the repository, so their bare imports (effect, ...) resolve from its
// node_modules; build-readme/ is ignored by git with the other build directories.
const runDir = path.join(repo, "build-readme", String(process.pid))
afterAll(() => {
  fs.rmSync(runDir, { recursive: true, force: true })
  // The parent too, once no other run uses it.
  if (fs.existsSync(path.dirname(runDir)) && fs.readdirSync(path.dirname(runDir)).length === 0)
    fs.rmSync(path.dirname(runDir), { recursive: true, force: true })
})

describe("the code blocks of README.md and docs/*.md", () => {
  it("has runnable ts/js blocks in the README, and every block names its language", () => {
    expect(runnable.filter((b) => b.page === "README.md").length).toBeGreaterThanOrEqual(2)
    for (const b of all) if (b.lang === "") throw new Error(`${b.page}:${b.line}: a code block without a language`)
    expect(text("README.md")).toContain("<!-- The ts and js code blocks of this README (and of docs/*.md) run as tests")
  })

  it("names only checks and needs this test has", () => {
    for (const b of runnable) for (const c of b.checks) expect(Object.keys(checks), `${b.page}:${b.line}`).toContain(c)
    for (const b of runnable) for (const n of b.needs) expect(Object.keys(needs), `${b.page}:${b.line}`).toContain(n)
  })

  it.for(runnable.map((b) => [`${b.page}:${b.line} (${b.lang}${b.checks.length ? `; checks ${b.checks.join(", ")}` : ""})`, b] as const))(
    "runs %s in an empty directory",
    async ([, block], ctx) => {
      for (const n of block.needs) {
        const missing = await needs[n]!()
        skipUnless(ctx, missing === undefined, missing ?? "")
      }
      const s = scratch()
      expect(fs.readdirSync(s.root)).toEqual([])
      const outside = snapshot(path.dirname(s.root)).filter((l) => !l.startsWith("root"))
      fs.mkdirSync(runDir, { recursive: true })
      const file = path.join(runDir, `${block.page.replace(/[/.]/g, "-")}-${block.line}.ts`)
      fs.writeFileSync(file, moduleOf(block, s.root))
      const module = (await import(pathToFileURL(file).href)) as { readonly __readme: Record<string, unknown> }
      for (const c of block.checks) checks[c]!(s, module.__readme)
      // Nothing outside the directory was touched.
      expect(snapshot(path.dirname(s.root)).filter((l) => !l.startsWith("root"))).toEqual(outside)
      expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
    }
  )
})
