/**
 * `npx pinnedfs mcp DIR` as an MCP client's configuration runs it: the package packed with npm
 * pack, installed offline into a fresh project (npm's cache only, as test/package/consumer.test.ts
 * installs it), and started through npx and through the installed bin by the SDK's Client over
 * stdio. What it checks is the package: dist/mcp shipped, the SDK and the server's other
 * dependencies declared and resolved from a real install, the bin dispatching to `mcp`.
 *
 * The addon: a prebuild when this checkout has one (CI), else the install runs without scripts and
 * the addon this checkout built is put where the install script would have built it
 * (build/Release), since a from-source build of the tarball takes minutes of a shared machine's CPU.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { install, pack } from "../../scripts/package/consumer.mjs"
import { skipUnless } from "../support/skip.ts"
import { repo, start, textOf } from "./support/servers.ts"

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-mcp-package-"))
const project = path.join(scratch, "project")
const workspace = path.join(scratch, "workspace")
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }), 120_000)

let cold = ""
const prebuilt = fs.existsSync(path.join(repo, "prebuilds", `linux-${process.arch}`, "pinnedfs.napi.glibc.node"))

/** dist/ as npm pack will take it: rebuilt when a source is newer. */
const ensureDist = () => {
  const built = path.join(repo, "dist", "mcp", "server.js")
  const sources = fs.readdirSync(path.join(repo, "src"), { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"))
  const newest = Math.max(...sources.map((f) => fs.statSync(path.join(repo, "src", f)).mtimeMs))
  if (fs.existsSync(built) && fs.statSync(built).mtimeMs >= newest) return
  const r = spawnSync(process.execPath, [path.join(repo, "scripts", "package", "typescript.mjs")], { encoding: "utf8" })
  if (r.status !== 0) throw new Error(`building dist failed:\n${r.stdout}${r.stderr}`)
}

beforeAll(() => {
  ensureDist()
  fs.mkdirSync(workspace)
  fs.writeFileSync(path.join(workspace, "hello.txt"), "hello from the workspace\n")
  const { tarball, files } = pack(scratch)
  expect(files).toContain("dist/mcp/server.js")
  const r = install(project, tarball, {}, "offline", prebuilt ? [] : ["--ignore-scripts"])
  if (!r.ok) {
    if (/ENOTCACHED|only-if-cached/.test(r.output) && !process.env["CI"]) {
      cold = "npm's cache lacks what the install needs: run `node scripts/package/consumer.mjs --warm` once (it fetches from the registry)"
      console.log(`skipped: ${cold}`)
      return
    }
    throw new Error(`npm install --offline of the tarball failed:\n${r.output}`)
  }
  if (!prebuilt) {
    const addon = (createRequire(import.meta.url)("node-gyp-build") as { path: (dir: string) => string }).path(repo)
    const to = path.join(project, "node_modules", "pinnedfs", "build", "Release", "pinnedfs.node")
    fs.mkdirSync(path.dirname(to), { recursive: true })
    fs.copyFileSync(addon, to)
  }
}, 600_000)

describe("the packed tarball, installed", () => {
  it("serves MCP through npx pinnedfs mcp DIR and through the installed bin", async (ctx) => {
    skipUnless(ctx, cold === "", cold)
    const npx = spawnSync("sh", ["-c", "command -v npx"], { encoding: "utf8" }).stdout.trim()
    for (const [executable, args] of [
      [npx, ["--offline", "--no-install", "pinnedfs", "mcp", workspace]],
      [process.execPath, [path.join(project, "node_modules", ".bin", "pinnedfs"), "mcp", workspace]]
    ] as const) {
      const s = await start(args, { executable, cwd: project, env: { PATH: process.env["PATH"] ?? "", HOME: os.homedir() } })
      try {
        const tools = await s.client.listTools()
        expect(tools.tools.map((t) => t.name)).toContain("read_text_file")
        expect(textOf(await s.call("read_text_file", { path: path.join(workspace, "hello.txt") }))).toBe("hello from the workspace\n")
        expect(textOf(await s.call("read_text_file", { path: "/etc/hostname" }))).toMatch(
          /^Access denied - path outside allowed directories/
        )
        expect(s.client.getServerVersion()?.name).toBe("pinnedfs-filesystem-server")
      } finally {
        await s.close()
      }
    }
  }, 120_000)

  it("declares the SDK and the server's libraries as exact dependencies, and npm ls is clean", (ctx) => {
    skipUnless(ctx, cold === "", cold)
    const manifest = JSON.parse(fs.readFileSync(path.join(project, "node_modules", "pinnedfs", "package.json"), "utf8")) as {
      dependencies: Record<string, string>
    }
    for (const name of ["@modelcontextprotocol/sdk", "zod", "diff", "minimatch"]) {
      expect(manifest.dependencies[name], name).toMatch(/^\d+\.\d+\.\d+$/)
    }
    const ls = spawnSync("npm", ["ls", "--offline", "--all"], { cwd: project, encoding: "utf8" })
    expect(ls.stderr).toBe("")
    expect(ls.status).toBe(0)
  }, 120_000)
})
