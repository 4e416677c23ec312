/**
 * `pinnedfs/dev` does not force ESLint or Prettier (or Effect) on its users: the package, set up
 * where none of them can be resolved, still loads, runs a plan, and its ESLint and Prettier
 * adapters fail their step with a message saying what to install.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, expect, it } from "vitest"
import { runNodeOk } from "./support/node.ts"
import { repo } from "./support/tools.ts"
import { transpileSources } from "./support/transpile.ts"

const made: Array<() => void> = []
afterAll(() => {
  for (const f of made.splice(0)) f()
})

/** The package as a user without the optional peers would have it: only its own dependencies. */
const bareInstall = (): string => {
  const t = transpileSources("optional")
  made.push(t.cleanup)
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-bare-"))
  made.push(() => fs.rmSync(base, { recursive: true, force: true }))
  const pkg = path.join(base, "pinnedfs")
  fs.mkdirSync(path.join(pkg, "node_modules"), { recursive: true })
  fs.cpSync(t.dir, path.join(pkg, "dist"), { recursive: true })
  fs.copyFileSync(path.join(repo, "package.json"), path.join(pkg, "package.json"))
  fs.symlinkSync(path.join(repo, "build"), path.join(pkg, "build"))
  // Under PREBUILDS_ONLY (CI's Node 22 and 24 passes) node-gyp-build looks in prebuilds/ only.
  if (fs.existsSync(path.join(repo, "prebuilds"))) fs.symlinkSync(path.join(repo, "prebuilds"), path.join(pkg, "prebuilds"))
  const { dependencies } = JSON.parse(fs.readFileSync(path.join(repo, "package.json"), "utf8")) as { dependencies: Record<string, string> }
  for (const name of Object.keys(dependencies)) {
    // A scoped dependency (@modelcontextprotocol/sdk) lives one directory down.
    fs.mkdirSync(path.dirname(path.join(pkg, "node_modules", name)), { recursive: true })
    fs.symlinkSync(path.join(repo, "node_modules", name), path.join(pkg, "node_modules", name))
  }
  return pkg
}

const program = `
const pkg = process.argv[1]
const resolvable = (name) => import(name).then(() => true, () => false)
const { PinnedRoot } = await import(pkg + "/dist/index.js")
const dev = await import(pkg + "/dist/dev/index.js")
const fs = await import("node:fs")
const os = await import("node:os")
const dir = fs.mkdtempSync(os.tmpdir() + "/pinnedfs-bare-ws-")
fs.mkdirSync(dir + "/src")
fs.writeFileSync(dir + "/src/a.ts", "let a = 1\\n")
const root = await PinnedRoot.open(dir)
const ws = await dev.acquire(root, { scope: ["src/**"] })
const policy = dev.Policy.fromRules({ read: ["**"], write: ["**"] })
const messages = []
for (const fixer of [dev.eslintFixer({ scope: ["src/**"] }), dev.prettierFixer({ scope: ["src/**"] })]) {
  const r = await dev.Plan.run([dev.Step.fix("f", fixer)], { root, workspace: ws, policy, gate: dev.approveAll })
  messages.push(r.steps[0].diagnostics.map((d) => d.message).join("; "))
}
root.close()
fs.rmSync(dir, { recursive: true })
console.log(JSON.stringify({ eslint: await resolvable("eslint"), prettier: await resolvable("prettier"), effect: await resolvable("effect"), files: ws.paths(), messages }))
`

it("loads and runs without ESLint, Prettier or Effect; the adapters say what to install", async () => {
  const pkg = bareInstall()
  const out = await runNodeOk(["--input-type=module", "-e", program, pkg], { cwd: path.dirname(pkg) })
  const answer = JSON.parse(out) as { eslint: boolean; prettier: boolean; effect: boolean; files: Array<string>; messages: Array<string> }
  expect([answer.eslint, answer.prettier, answer.effect]).toEqual([false, false, false])
  expect(answer.files).toEqual(["src/a.ts"])
  expect(answer.messages[0]).toMatch(/needs the optional peer dependency 'eslint': npm install --save-dev eslint/)
  expect(answer.messages[1]).toMatch(/needs the optional peer dependency 'prettier': npm install --save-dev prettier/)
}, 60_000)
