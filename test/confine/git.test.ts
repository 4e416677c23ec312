/**
 * git under confinement, for real: by default it can read its repository but not write it; with
 * git write for one launch (`git: "write"`, `pinnedfs run --git-write`) a real `git commit` lands,
 * while the hooks and the config, which run code the next time the user runs git outside any
 * sandbox, stay read-only unless granted too.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { Confinement } from "../../src/confine/index.ts"
import { strategies } from "../support/strategies.ts"
import { stagePackage } from "./support/stage.ts"
import { exec, runShell, sandboxTree, type SandboxTree } from "./support/tree.ts"

/** A real repository in the workspace with one commit, as `git init` and `git commit` leave it. */
const repository = (t: SandboxTree) => {
  fs.rmSync(path.join(t.ws, ".git"), { recursive: true })
  const git = (...args: Array<string>) => {
    const r = spawnSync("git", args, { cwd: t.ws, encoding: "utf8", env: { ...process.env, HOME: t.home } })
    expect(r.status, r.stderr).toBe(0)
    return r.stdout
  }
  git("init", "-q", "-b", "main")
  git("config", "user.email", "test@example.com")
  git("config", "user.name", "test")
  git("add", "src.txt")
  git("commit", "-qm", "first")
  return { git, config: fs.readFileSync(path.join(t.ws, ".git", "config"), "utf8") }
}

// What a child that may write the repository tries: a commit, then a hook and a config key that
// would run code at the user's next git outside the sandbox.
const attempt = [
  "echo change >> src.txt",
  "git add src.txt && git commit -qm second && echo committed",
  "printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/post-checkout && echo hook-written",
  "git config core.hooksPath /tmp && echo config-written",
  "echo x >> .git/config && echo config-appended",
  "exit 0"
].join("; ")

describe.each(strategies)("git under confinement (%s)", (strategy) => {
  const run = async (t: SandboxTree, git: "write" | undefined, grants: ReadonlyArray<string> = []) => {
    const session = new Confinement({ target: { workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") }, strategy })
    for (const g of grants) await session.grants.add({ path: g, access: "write", scope: "recursive", lifetime: "once" })
    const launch = await session.prepare({ git })
    const env = { ...process.env, HOME: t.home, GIT_CONFIG_NOSYSTEM: "1" }
    return runShell(launch, attempt, env)
  }

  it("by default git cannot commit: the repository is read-only", async () => {
    const t = sandboxTree()
    const { git } = repository(t)
    const r = await run(t, undefined)
    expect(r.stdout).not.toContain("committed")
    expect(git("log", "--format=%s")).toBe("first\n")
  })

  it("git write: a real commit lands; the hooks and the config stay read-only", async () => {
    const t = sandboxTree()
    const { git, config } = repository(t)
    const r = await run(t, "write")
    expect(r.stdout).toContain("committed")
    expect(r.stdout).not.toContain("hook-written")
    expect(r.stdout).not.toContain("config-written")
    expect(r.stdout).not.toContain("config-appended")
    expect(git("log", "--format=%s")).toBe("second\nfirst\n")
    expect(fs.existsSync(path.join(t.ws, ".git", "hooks", "post-checkout"))).toBe(false)
    expect(fs.readFileSync(path.join(t.ws, ".git", "config"), "utf8")).toBe(config)
    expect(r.plan.grants.applied).toContainEqual(expect.objectContaining({ id: "git-write", path: path.join(t.ws, ".git") }))
    expect(r.plan.restrictions).toContainEqual(expect.objectContaining({ path: path.join(t.ws, ".git", "hooks"), access: "read-only" }))
    expect(r.plan.restrictions).toContainEqual(expect.objectContaining({ path: path.join(t.ws, ".git", "config"), access: "read-only" }))
    expect(git("status", "--porcelain")).toBe("") // what git wrote is a repository git itself reads back
  })

  it("git write with the hooks granted too: the hooks become writable, the config stays read-only", async () => {
    const t = sandboxTree()
    const { config } = repository(t)
    const r = await run(t, "write", [path.join(t.ws, ".git", "hooks")])
    expect(r.stdout).toContain("committed")
    expect(r.stdout).toContain("hook-written")
    expect(r.stdout).not.toContain("config-written")
    expect(fs.readFileSync(path.join(t.ws, ".git", "config"), "utf8")).toBe(config)
  })

  it("git write in a repository without a hooks directory: it is made, empty and read-only, and removed after", async () => {
    const t = sandboxTree()
    repository(t)
    fs.rmSync(path.join(t.ws, ".git", "hooks"), { recursive: true })
    const r = await run(t, "write")
    expect(r.stdout).toContain("committed")
    expect(r.stdout).not.toContain("hook-written")
    expect(r.plan.created).toContainEqual(expect.objectContaining({ path: path.join(t.ws, ".git", "hooks"), purpose: "protected" }))
    expect(fs.existsSync(path.join(t.ws, ".git", "hooks"))).toBe(false)
  })
})

let cli = ""
beforeAll(() => {
  cli = path.join(stagePackage(), "fixtures", "cli.mjs")
})

it("pinnedfs run --git-write: the same, from the command line", async () => {
  const t = sandboxTree()
  const { git, config } = repository(t)
  const r = await exec(process.execPath, [cli, "run", "--git-write", "--", "/bin/sh", "-c", attempt], {
    cwd: t.ws,
    env: { ...process.env, HOME: t.home, TMPDIR: t.tmp, PINNEDFS_RUNTIME_DIR: t.at("run"), GIT_CONFIG_NOSYSTEM: "1" }
  })
  expect(r.code).toBe(0)
  expect(r.stderr).not.toMatch(/pinnedfs run/)
  expect(r.stdout).toContain("committed")
  expect(r.stdout).not.toContain("hook-written")
  expect(git("log", "--format=%s")).toBe("second\nfirst\n")
  expect(fs.readFileSync(path.join(t.ws, ".git", "config"), "utf8")).toBe(config)
})
