/**
 * A `.git` that is a file points at the repository git uses: `gitdir: <path>` (a bare layout's
 * `./.bare`, a separate git directory, a worktree's `.git/worktrees/<name>` with its `commondir`,
 * a submodule's `.git/modules/<name>`). Protecting only the pointer file leaves the repository it
 * names writable, and a child that writes its config or hooks runs code the next time the user
 * runs git. Each layout is made by real git; the child runs real git against it.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { Confinement } from "../../src/confine/index.ts"
import { strategies } from "../support/strategies.ts"
import { refusal, runScript, sandboxTree, type SandboxTree } from "./support/tree.ts"

const git = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "protocol.file.allow=always", ...args], {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: cwd }
  }).toString()

const fresh = (): SandboxTree => {
  const t = sandboxTree()
  fs.rmSync(t.at("ws/.git"), { recursive: true })
  return t
}

describe.each(strategies)("git pointer files (%s)", (strategy) => {
  const session = (t: SandboxTree) =>
    new Confinement({ target: { workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") }, strategy })
  const env = (t: SandboxTree) => `export HOME='${t.home}' GIT_CONFIG_NOSYSTEM=1;`

  it("a bare layout (.git reading 'gitdir: ./.bare'): the repository it names is read-only", async () => {
    const t = fresh()
    git(t.ws, "init", "-q", "--bare", ".bare")
    fs.writeFileSync(t.at("ws/.git"), "gitdir: ./.bare\n")
    const config = t.read("ws/.bare/config")
    const launch = await session(t).prepare()
    expect(launch.plan.restrictions).toContainEqual(
      expect.objectContaining({ path: t.at("ws/.bare"), access: "read-only", origin: "pointer", rule: "**/.git" })
    )
    const r = await runScript(
      launch,
      `${env(t)} git config core.hooksPath /tmp/evil && echo config-written; echo x > .bare/hooks/post-checkout && echo hook-written; git rev-parse --git-dir && echo edit >> src.txt && echo edit-ok`
    )
    expect(r.stdout).toContain("edit-ok")
    expect(r.stdout).toContain(".bare") // git still reads the repository
    expect(r.stdout).not.toContain("config-written")
    expect(r.stdout).not.toContain("hook-written")
    expect(t.read("ws/.bare/config")).toBe(config)
    expect(fs.existsSync(t.at("ws/.bare/hooks/post-checkout"))).toBe(false)
  })

  it("a separate git directory and a worktree made by git worktree add: both git directories read-only", async () => {
    const t = fresh()
    fs.mkdirSync(t.at("ws/store"))
    git(t.ws, "init", "-q", `--separate-git-dir=${t.at("ws/store/main.git")}`, "main")
    git(t.at("ws/main"), "commit", "-q", "--allow-empty", "-m", "first")
    git(t.at("ws/main"), "worktree", "add", "-q", "../wt")
    expect(fs.readFileSync(t.at("ws/wt/.git"), "utf8")).toContain(t.at("ws/store/main.git/worktrees/wt"))
    const config = t.read("ws/store/main.git/config")
    const launch = await session(t).prepare()
    const restricted = launch.plan.restrictions.filter((r) => r.access === "read-only").map((r) => r.path)
    expect(restricted).toEqual(expect.arrayContaining([t.at("ws/store/main.git")]))
    const r = await runScript(
      launch,
      `${env(t)} git -C wt config core.hooksPath /tmp/evil && echo wt-config; git -C main config core.hooksPath /tmp/evil && echo main-config; echo x > store/main.git/worktrees/wt/HEAD && echo head-written; git -C wt status --short >/dev/null && echo status-ok`
    )
    expect(r.stdout).toContain("status-ok")
    for (const bad of ["wt-config", "main-config", "head-written"]) expect(r.stdout).not.toContain(bad)
    expect(t.read("ws/store/main.git/config")).toBe(config)
  })

  it("a submodule made by git submodule add: its repository in .git/modules stays read-only", async () => {
    const t = fresh()
    git(t.ws, "init", "-q", "lib-src")
    git(t.at("ws/lib-src"), "commit", "-q", "--allow-empty", "-m", "lib")
    git(t.ws, "init", "-q", "main")
    git(t.at("ws/main"), "submodule", "add", "-q", "../lib-src", "lib")
    expect(fs.readFileSync(t.at("ws/main/lib/.git"), "utf8")).toMatch(/^gitdir: \.\.\/\.git\/modules\/lib/)
    const config = t.read("ws/main/.git/modules/lib/config")
    const r = await runScript(
      await session(t).prepare(),
      `${env(t)} git -C main/lib config core.hooksPath /tmp/evil && echo sub-config; git -C main/lib log --oneline >/dev/null && echo log-ok`
    )
    expect(r.stdout).toContain("log-ok")
    expect(r.stdout).not.toContain("sub-config")
    expect(t.read("ws/main/.git/modules/lib/config")).toBe(config)
  })

  it("a pointer is read as git reads it: every trailing CR and LF dropped, a newline inside the path kept", async () => {
    const t = fresh()
    git(t.ws, "init", "-q", "--bare", ".bare")
    // git drops the trailing CR and opens .bare; a decoy named '.bare\r' must not take the protection.
    fs.mkdirSync(t.at("ws/.bare\r"))
    fs.writeFileSync(t.at("ws/.git"), "gitdir: ./.bare\r")
    expect(git(t.ws, "rev-parse", "--absolute-git-dir").trim()).toBe(t.at("ws/.bare"))
    const config = t.read("ws/.bare/config")
    const launch = await session(t).prepare()
    expect(launch.plan.restrictions).toContainEqual(expect.objectContaining({ path: t.at("ws/.bare"), origin: "pointer" }))
    const r = await runScript(
      launch,
      `${env(t)} git config core.hooksPath /tmp/evil && echo config-written; echo edit >> src.txt && echo edit-ok`
    )
    expect(r.stdout).toContain("edit-ok")
    expect(r.stdout).not.toContain("config-written")
    expect(t.read("ws/.bare/config")).toBe(config)
    // A repository whose name holds a newline, named by a pointer ending in CR LF CR LF, in a
    // directory whose name holds control characters: git follows it, and so must the launch.
    fs.rmSync(t.at("ws/.git"))
    git(t.ws, "init", "-q", "--bare", "n\nm.git")
    fs.mkdirSync(t.at("ws/w\r\u2028\x1b[31m"))
    fs.writeFileSync(t.at("ws/w\r\u2028\x1b[31m/.git"), "gitdir: ../n\nm.git\r\n\r\n")
    expect(git(t.at("ws/w\r\u2028\x1b[31m"), "rev-parse", "--absolute-git-dir").trim()).toBe(t.at("ws/n\nm.git"))
    const nested = t.read("ws/n\nm.git/config")
    const other = await session(t).prepare()
    expect(other.plan.restrictions).toContainEqual(expect.objectContaining({ path: t.at("ws/n\nm.git"), origin: "pointer" }))
    const again = await runScript(
      other,
      `${env(t)} cd "$(printf 'w\\r\\342\\200\\250\\033[31m')" && git config core.hooksPath /tmp/evil && echo config-written; echo done`
    )
    expect(again.stdout).toContain("done")
    expect(again.stdout).not.toContain("config-written")
    expect(t.read("ws/n\nm.git/config")).toBe(nested)
  })

  it("a pointer that cannot be followed refuses the launch, saying which and why", async () => {
    const t = fresh()
    fs.writeFileSync(t.at("ws/.git"), "gitdir: ./missing\n")
    const missing = await refusal(session(t).prepare())
    expect(missing.reason).toBe("pointer")
    expect(missing.message).toContain(t.at("ws/.git"))
    expect(missing.message).toContain(t.at("ws/missing"))
    // Through a link inside the workspace: the child could turn the link elsewhere.
    fs.mkdirSync(t.at("ws/real"))
    git(t.at("ws/real"), "init", "-q", "--bare", "repo.git")
    fs.symlinkSync(t.at("ws/real"), t.at("ws/link"))
    fs.writeFileSync(t.at("ws/.git"), "gitdir: link/repo.git\n")
    const linked = await refusal(session(t).prepare())
    expect(linked.reason).toBe("pointer")
    expect(linked.message).toMatch(/symbolic link/)
    // Not a pointer at all, or one too long to be one.
    fs.writeFileSync(t.at("ws/.git"), "not a pointer\n")
    expect((await refusal(session(t).prepare())).message).toMatch(/gitdir:/)
    fs.writeFileSync(t.at("ws/.git"), `gitdir: ${"a/".repeat(5000)}\n`)
    expect((await refusal(session(t).prepare())).message).toMatch(/longer than/)
    expect(fs.readdirSync(t.ws).sort()).toEqual([".git", "link", "real", "src.txt"])
  })
})
