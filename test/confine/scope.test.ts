/**
 * Launch scopes, with real children in bubblewrap: a scope narrows what one launch may write in the
 * workspace to the files it names (rewritable in place) and the directories it names (trees), the
 * rest of the workspace read-only. Every refusal is paired with an allowed write in the same child.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { Confinement, ConfinementError, sandboxAvailable } from "../../src/confine/index.ts"
import { strategies } from "../support/strategies.ts"
import { expectOutput, expectScript, refusal, runScript, sandboxTree, type SandboxTree } from "./support/tree.ts"
import { skipUnless, sandboxWhy } from "../support/skip.ts"

const sandbox = await sandboxAvailable()

describe.each(strategies)("launch scopes (%s)", (strategy) => {
  const session = (t: SandboxTree, mode: "confined" | "full-access" = "confined") =>
    new Confinement({ target: { workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") }, strategy, mode })
  const tree = () => {
    const t = sandboxTree()
    t.write("ws/src/a.ts", "a\n")
    t.write("ws/src/b.ts", "b\n")
    t.write("ws/README.md", "readme\n")
    return t
  }
  /** Prepares a launch of `scope`, runs `script` in it, expects `words` in its output; answers the plan. */
  const runScoped = async (
    t: SandboxTree,
    scope: { files: Array<string>; directories: Array<string> },
    script: string,
    words: ReadonlyArray<string>
  ) => {
    const launch = await session(t).prepare({ scope })
    await expectScript(launch, script, words)
    return launch.plan
  }

  it("only the scope's files are writable in the workspace: the rest, new files beside them and renames onto them fail", async (ctx) => {
    skipUnless(ctx, sandbox.available, sandboxWhy(sandbox))
    const t = tree()
    const launch = await session(t).prepare({ scope: { files: ["src/a.ts"] } })
    expect(launch.plan.scope).toEqual({ files: [path.join(t.ws, "src/a.ts")], directories: [], skipped: [] })
    expect(launch.plan.writableRoots).not.toContain(t.ws)
    const r = await runScript(
      launch,
      [
        "echo fixed >> src/a.ts && echo a-written",
        "echo fixed >> src/b.ts || echo b-denied",
        "echo fixed >> README.md || echo readme-denied",
        "echo new > src/new.ts || echo create-denied",
        'echo swap > "$TMPDIR/swap" && echo tmp-written',
        'mv "$TMPDIR/swap" src/a.ts 2>/dev/null || echo rename-denied',
        "rm -f src/b.ts 2>/dev/null; test -f src/b.ts && echo remove-denied"
      ].join("; ")
    )
    expect(r.started).toBe(true)
    expectOutput(r.stdout, ["a-written", "b-denied", "readme-denied", "create-denied", "tmp-written", "rename-denied", "remove-denied"])
    expect(r.stderr).toMatch(/Read-only file system/)
    expect(t.read("ws/src/a.ts")).toBe("a\nfixed\n")
    expect(t.read("ws/src/b.ts")).toBe("b\n")
    expect(t.read("ws/README.md")).toBe("readme\n")
    expect(fs.readdirSync(path.join(t.ws, "src")).sort()).toEqual(["a.ts", "b.ts"])
  })

  it("a scope directory is writable as a tree; a missing one is made for the launch and kept only if used", async (ctx) => {
    skipUnless(ctx, sandbox.available, sandboxWhy(sandbox))
    const t = tree()
    const plan = await runScoped(
      t,
      { files: [], directories: ["gen", "out/deep"] },
      "echo made > gen/x.ts && echo gen-written; echo no > out/sibling || echo sibling-denied; echo no >> src/a.ts || echo a-denied",
      ["gen-written", "sibling-denied", "a-denied"]
    )
    expect(plan.created.map((c) => [c.path, c.purpose])).toEqual([
      [path.join(t.ws, "gen"), "scope"],
      [path.join(t.ws, "out"), "scope"],
      [path.join(t.ws, "out/deep"), "scope"]
    ])
    expect(t.read("ws/gen/x.ts")).toBe("made\n")
    // gen holds the child's file and stays; out/deep was unused and is removed with out.
    expect(fs.existsSync(path.join(t.ws, "out"))).toBe(false)
    expect(t.read("ws/src/a.ts")).toBe("a\n")
  })

  it("a scope path inside a protected path stays protected and is reported skipped; a missing file is skipped", async (ctx) => {
    skipUnless(ctx, sandbox.available, sandboxWhy(sandbox))
    const t = tree()
    const plan = await runScoped(
      t,
      { files: ["src/a.ts", ".git/config", "src/gone.ts"], directories: [".git/hooks"] },
      "echo x >> src/a.ts && echo a-written; echo evil >> .git/config || echo config-denied; mkdir .git/hooks || echo hooks-denied",
      ["a-written", "config-denied", "hooks-denied"]
    )
    expect(plan.scope!.files).toEqual([path.join(t.ws, "src/a.ts")])
    expect(plan.scope!.skipped).toEqual([
      { path: path.join(t.ws, ".git/hooks"), why: `inside the protected path '${path.join(t.ws, ".git")}'` },
      { path: path.join(t.ws, ".git/config"), why: `inside the protected path '${path.join(t.ws, ".git")}'` },
      { path: path.join(t.ws, "src/gone.ts"), why: "it does not exist" }
    ])
    expect(t.read("ws/.git/config")).toBe("[core]\n")
    expect(fs.existsSync(path.join(t.ws, ".git/hooks"))).toBe(false)
  })

  it("a scope file that is a symbolic link or has another name refuses the launch; nothing is made", async (ctx) => {
    skipUnless(ctx, sandbox.available, sandboxWhy(sandbox))
    const t = tree()
    fs.symlinkSync(path.join(t.outside, "keep.txt"), path.join(t.ws, "src/link.ts"))
    fs.linkSync(path.join(t.ws, "src/b.ts"), path.join(t.ws, "b-alias.ts"))
    const linked = await refusal(session(t).prepare({ scope: { files: ["src/link.ts"], directories: ["gen"] } }))
    expect(linked.reason).toBe("link")
    expect(fs.existsSync(path.join(t.ws, "gen"))).toBe(false) // made for the launch, undone with it
    expect((await refusal(session(t).prepare({ scope: { files: ["src/b.ts"] } }))).reason).toBe("hard-link")
  })

  it("a scope directory reached through a link refuses the launch, and nothing is made outside", async (ctx) => {
    skipUnless(ctx, sandbox.available, sandboxWhy(sandbox))
    const t = tree()
    fs.symlinkSync(t.outside, path.join(t.ws, "out"))
    expect((await refusal(session(t).prepare({ scope: { files: [], directories: ["out/gen"] } }))).reason).toBe("creation-failed")
    expect(fs.readdirSync(t.outside)).toEqual(["keep.txt"])
  })

  it("bad scopes are refused with what was wrong", async (ctx) => {
    skipUnless(ctx, sandbox.available, sandboxWhy(sandbox))
    const t = tree()
    const s = session(t)
    const cases: Array<[unknown, RegExp]> = [
      [{}, /needs a files array/],
      [{ files: ["../outside/keep.txt"] }, /'\.\.' component/],
      [{ files: ["/etc/passwd"] }, /relative to the workspace/],
      [{ files: ["a\0b"] }, /without NUL/],
      [{ files: ["."] }, /the workspace itself, not a file/],
      [{ files: [], directories: "src" }, /directories must be an array/],
      [{ files: Array.from({ length: 4097 }, (_, i) => `f${i}`) }, /4097 paths, more than the 4096/]
    ]
    for (const [scope, message] of cases) {
      const e = await refusal(s.prepare({ scope: scope as never }))
      expect(e).toBeInstanceOf(ConfinementError)
      expect([e.reason, e.message]).toEqual(["invalid-scope", expect.stringMatching(message)])
    }
  })

  it("full access ignores a scope: it narrows nothing there", async (ctx) => {
    skipUnless(ctx, sandbox.available, sandboxWhy(sandbox))
    const t = tree()
    const launch = await session(t, "full-access").prepare({ scope: { files: ["src/a.ts"] } })
    expect(launch.plan.scope).toBeNull()
    await launch.cleanup()
  })
})
