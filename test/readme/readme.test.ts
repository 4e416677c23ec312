/**
 * The README's own code, run: every ```ts / ```js block in README.md, taken from the README's text
 * as it is now, runs as an ES module against a fresh scratch workspace, so an example that no
 * longer compiles, throws, or no longer does what it shows fails here. New blocks are picked up
 * by themselves.
 *
 * The conventions (the README says them in a comment at its top):
 * - a block whose info string carries `fragment` (```ts fragment) is a listing, not a program,
 *   and does not run; every other ts/js block must;
 * - "/home/me/project" in a block names the workspace; it becomes the scratch workspace's path;
 * - imports of "pinnedfs" and its subpaths run the sources: each `exports` entry of package.json
 *   maps dist/<x>.js back to src/<x>.ts;
 * - an HTML comment right before a block may add files to its workspace,
 *   `<!-- readme-test workspace: {"path": "content", "dir/": ""} -->`, and name checks below that
 *   run after it, `<!-- readme-test check: name -->`; a check sees the workspace and the block's
 *   top-level bindings.
 * After every block the outside of the workspace must be as it was.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { Option } from "effect"
import ts from "typescript"
import { afterAll, describe, expect, it } from "vitest"
import { snapshot } from "../support/attacker.ts"
import { scratch, type Scratch } from "../support/tree.ts"

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const readme = fs.readFileSync(path.join(repo, "README.md"), "utf8")

/** The workspace every block starts from, before its own additions. */
const workspace: Record<string, string> = {
  "src/index.ts": "export const answer = 42  \n",
  "src/util.ts": "export const twice = (n: number) => 2 * n\n\n",
  "secrets/key.ts": 'export const key = "KEY"\n',
  ".env": "TOKEN=1\n",
  "README.md": "# project\n",
  "out/": ""
}

type Check = (s: Scratch, bindings: Record<string, unknown>) => void

/** Checks a block may ask for by name, for what its comments claim. */
const checks: Record<string, Check> = {
  // PinnedRoot's example copies src/index.ts to out/report.txt.
  "promise-api": (s) => {
    expect(fs.readFileSync(s.abs("out/report.txt"), "utf8")).toBe(workspace["src/index.ts"])
  },
  // The kernel example's formatter trims src/*.ts, never reads secrets/ or .env, and the read of
  // .env comes back as the kernel's PermissionDenied.
  "kernel-formatter": (s, b) => {
    expect(fs.readFileSync(s.abs("src/index.ts"), "utf8")).toBe("export const answer = 42\n")
    expect(fs.readFileSync(s.abs("src/util.ts"), "utf8")).toBe("export const twice = (n: number) => 2 * n\n")
    expect(fs.readFileSync(s.abs("secrets/key.ts"), "utf8")).toBe(workspace["secrets/key.ts"])
    // A real project has .ts files outside src/: listed, read, and left alone.
    expect(fs.readFileSync(s.abs("vite.config.ts"), "utf8")).toBe("export default {}  \n")
    expect(fs.readFileSync(s.abs("test/a.test.ts"), "utf8")).toBe("export {}  \n")
    const result = b["result"] as { readonly seen: ReadonlyArray<string>; readonly refusal: unknown }
    const seen = result.seen.map((f) => path.relative(s.root, path.resolve(s.root, f))).sort()
    expect(seen).toEqual(["src/index.ts", "src/util.ts", "test/a.test.ts", "vite.config.ts"])
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

interface Block {
  /** 1-based line of the opening fence. */
  readonly line: number
  readonly lang: string
  readonly flags: ReadonlyArray<string>
  readonly code: string
  readonly workspace: Record<string, string>
  readonly checks: ReadonlyArray<string>
}

const RUNNABLE = new Set(["ts", "typescript", "js", "javascript", "mjs"])

/** Every fenced block of the README with its info string and the readme-test comments before it. */
const blocks = (text: string): Array<Block> => {
  const lines = text.split("\n")
  const out: Array<Block> = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)(.*)$/.exec(lines[i]!)
    if (!open) continue
    const end = lines.findIndex((l, j) => j > i && l.startsWith("```"))
    if (end < 0) throw new Error(`README.md:${i + 1}: a code block that never closes`)
    // The readme-test comments directly above the fence (blank lines between are allowed).
    const extra: Record<string, string> = {}
    const wanted: Array<string> = []
    for (let j = i - 1; j >= 0 && (lines[j]!.trim() === "" || lines[j]!.startsWith("<!-- readme-test")); j--) {
      const note = /^<!-- readme-test (workspace|check): (.*) -->$/.exec(lines[j]!.trim())
      if (lines[j]!.trim() !== "" && !note) throw new Error(`README.md:${j + 1}: a readme-test comment this test does not read`)
      if (note?.[1] === "workspace") Object.assign(extra, JSON.parse(note[2]!))
      if (note?.[1] === "check") wanted.push(...note[2]!.split(",").map((c) => c.trim()))
    }
    out.push({
      line: i + 1,
      lang: open[1]!,
      flags: open[2]!.trim().split(/\s+/).filter(Boolean),
      code: lines.slice(i + 1, end).join("\n"),
      workspace: extra,
      checks: wanted
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

const all = blocks(readme)
const runnable = all.filter((b) => RUNNABLE.has(b.lang) && !b.flags.includes("fragment"))

// Block files live under the repository, so their bare imports (effect, ...) resolve from its
// node_modules; build-readme/ is ignored by git with the other build directories.
const runDir = path.join(repo, "build-readme", String(process.pid))
afterAll(() => {
  fs.rmSync(runDir, { recursive: true, force: true })
})

describe("README.md code blocks", () => {
  it("has runnable ts/js blocks, and says which are fragments", () => {
    expect(runnable.length).toBeGreaterThanOrEqual(2)
    // Every ts/js block is either run or marked; an unmarked block in another language that looks
    // like code we would run is a mistake of the README.
    for (const b of all) if (b.lang === "") throw new Error(`README.md:${b.line}: a code block without a language`)
    expect(readme).toContain("<!-- The ts and js code blocks of this README run as tests")
  })

  it("names only checks this test has", () => {
    for (const b of runnable) for (const c of b.checks) expect(Object.keys(checks), `README.md:${b.line}`).toContain(c)
  })

  it.each(runnable.map((b) => [`README.md:${b.line} (${b.lang}${b.checks.length ? `; checks ${b.checks.join(", ")}` : ""})`, b] as const))(
    "runs %s",
    async (_name, block) => {
      const s = scratch()
      s.make({ ...workspace, ...block.workspace })
      const outside = snapshot(path.dirname(s.root)).filter((l) => !l.startsWith("root"))
      fs.mkdirSync(runDir, { recursive: true })
      const file = path.join(runDir, `block-${block.line}.ts`)
      fs.writeFileSync(file, moduleOf(block, s.root))
      const module = (await import(pathToFileURL(file).href)) as { readonly __readme: Record<string, unknown> }
      for (const c of block.checks) checks[c]!(s, module.__readme)
      // Nothing outside the workspace was touched.
      expect(snapshot(path.dirname(s.root)).filter((l) => !l.startsWith("root"))).toEqual(outside)
      expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
    }
  )
})
