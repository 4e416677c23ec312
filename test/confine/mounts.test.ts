/**
 * A mount inside the workspace (a tmpfs, a volume): confined like the rest of the workspace. It is
 * writable in the sandbox, discovery walks it as its own tree, and what the policy protects in it
 * is protected. A bind mount that shows part of a file system the launch protects or writes under
 * another name (the workspace's own `.git` mounted elsewhere in it, say) would reach a protected
 * path through a name no rule matches: such a launch is refused, naming the mount and what to do.
 * Mounting needs root: as another user these tests print why they do not run.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { afterEach, describe, expect, it } from "vitest"
import { Confinement } from "../../src/confine/index.ts"
import { strategies } from "../support/strategies.ts"
import { refusal, runScript, sandboxTree, type SandboxTree } from "./support/tree.ts"
import { skipUnless } from "../support/skip.ts"

const asRoot = process.getuid?.() === 0

const mounted: Array<string> = []
afterEach(() => {
  for (const m of mounted.splice(0).reverse()) execFileSync("umount", [m])
})
const mount = (...args: Array<string>) => {
  execFileSync("mount", args)
  mounted.push(args[args.length - 1]!)
}

describe.each(strategies)("mounts inside the workspace (%s)", (strategy) => {
  const session = (t: SandboxTree) =>
    new Confinement({ target: { workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") }, strategy })

  // Each volume: made under ws/vol, with a data file and a repository in it; `disk` is where both
  // are on the host, which the sandbox's writes must reach (the data) or not (the repository).
  const volumes = [
    {
      name: "a tmpfs under the workspace is writable and walked: a repository in it stays read-only",
      make: (t: SandboxTree) => {
        fs.mkdirSync(t.at("ws/vol"))
        mount("-t", "tmpfs", "-o", "size=4m,mode=0777", "pinnedfs-test", t.at("ws/vol"))
        t.write("ws/vol/data.txt", "data\n")
        t.write("ws/vol/proj/.git/config", "[core]\n")
      },
      disk: "ws/vol",
      data: "data.txt",
      repo: "proj"
    },
    {
      name: "a bind mount of a directory from elsewhere on the same file system (a volume) is confined like a tmpfs",
      make: (t: SandboxTree) => {
        t.write("volumes/data/data.txt", "data\n")
        t.write("volumes/data/repo/.git/config", "[core]\n")
        fs.mkdirSync(t.at("ws/vol"))
        mount("--bind", t.at("volumes/data"), t.at("ws/vol"))
      },
      disk: "volumes/data",
      data: "data.txt",
      repo: "repo"
    }
  ]

  it.for(volumes)("$name", async ({ make, disk, data, repo }, ctx) => {
    skipUnless(ctx, asRoot, "mounting a tmpfs under the workspace needs root")
    const t = sandboxTree()
    make(t)
    const launch = await session(t).prepare()
    expect(launch.plan.restrictions).toContainEqual(expect.objectContaining({ path: t.at(`ws/vol/${repo}/.git`), access: "read-only" }))
    const r = await runScript(
      launch,
      `echo more >> vol/${data} && echo data-ok; echo x >> vol/${repo}/.git/config || echo git-denied; mkdir vol/new && echo mkdir-ok`
    )
    expect(r.stdout).toContain("data-ok")
    expect(r.stdout).toContain("git-denied")
    expect(r.stdout).toContain("mkdir-ok")
    expect(t.read(`${disk}/${data}`)).toBe("data\nmore\n")
    expect(t.read(`${disk}/${repo}/.git/config`)).toBe("[core]\n")
  })

  it("a bind mount showing the workspace's own .git under another name is refused, naming it", async (ctx) => {
    skipUnless(ctx, asRoot, "mounting a tmpfs under the workspace needs root")
    const t = sandboxTree()
    fs.mkdirSync(t.at("ws/alias"))
    mount("--bind", t.at("ws/.git"), t.at("ws/alias"))
    const e = await refusal(session(t).prepare())
    expect(e.reason).toBe("mount")
    expect(e.message).toContain(t.at("ws/alias"))
    expect(e.message).toContain(t.at("ws/.git"))
    expect(e.message).toMatch(/outside the workspace/)
  })
})
