/**
 * The synchronous spawn stand-in, used the way a fixer engine uses `spawn`: listeners attached
 * right after the call, output read from `stdout`/`stderr`, the outcome from `close`.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { Confinement, type ConfinedChild, ConfinementError, confinedSpawner } from "../../src/confine/index.ts"
import { strategies } from "../support/strategies.ts"
import { sandboxTree, type SandboxTree } from "./support/tree.ts"

const outcome = (child: ConfinedChild) =>
  new Promise<{ code: number | null; signal: string | null; stdout: string; error: unknown }>((resolve) => {
    let stdout = ""
    let error: unknown
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    child.on("error", (e: unknown) => (error = e))
    child.on("close", (code: number | null, signal: string | null) => resolve({ code, signal, stdout, error }))
  })

describe.each(strategies)("confinedSpawner (%s)", (strategy) => {
  const spawner = (t: SandboxTree) =>
    confinedSpawner(
      new Confinement({ target: { workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") }, strategy })
    )

  it("runs a fixer-like command confined: its edit lands, its write outside and to .git are stopped", async () => {
    const t = sandboxTree()
    const spawn = spawner(t)
    const child = spawn(
      "/bin/sh",
      [
        "-c",
        `tr a-z A-Z < src.txt > src.tmp && mv src.tmp src.txt; echo x > '${t.outside}/new' || echo outside-denied; echo x >> .git/config || echo git-denied`
      ],
      { cwd: t.ws }
    )
    const r = await outcome(child)
    expect(r.error).toBeUndefined()
    expect(r.code).toBe(0)
    expect(r.stdout).toContain("outside-denied")
    expect(r.stdout).toContain("git-denied")
    expect(t.read("ws/src.txt")).toBe("SOURCE\n")
    expect(fs.existsSync(path.join(t.outside, "new"))).toBe(false)
  })

  it("a launch that cannot be confined ends as error then close, and nothing runs", async () => {
    const t = sandboxTree()
    fs.mkdirSync(path.join(t.ws, "lib"))
    fs.symlinkSync(t.outside, path.join(t.ws, "lib", ".git"))
    const r = await outcome(spawner(t)("/bin/sh", ["-c", "touch ran"], { cwd: t.ws }))
    expect(r.error).toBeInstanceOf(ConfinementError)
    expect((r.error as ConfinementError).reason).toBe("link")
    expect(r.code).toBeNull()
    expect(fs.existsSync(path.join(t.ws, "ran"))).toBe(false)
  })

  it("close comes after the launch's cleanup: a missing .git made for the launch is gone by then", async () => {
    const t = sandboxTree()
    fs.rmSync(path.join(t.ws, ".git"), { recursive: true })
    const child = spawner(t)("/bin/sh", ["-c", "test -d .git && echo made"], { cwd: t.ws })
    const atClose = new Promise<boolean>((resolve) => child.on("close", () => resolve(fs.existsSync(path.join(t.ws, ".git")))))
    const r = await outcome(child)
    expect(r.stdout).toContain("made")
    expect(await atClose).toBe(false)
  })

  it("a sandbox program that fails before starting the command ends as error then close, not as the command's exit 1", async () => {
    const t = sandboxTree()
    const spawn = confinedSpawner(
      new Confinement({
        target: { workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") },
        strategy,
        bwrap: "/bin/false"
      })
    )
    const r = await outcome(spawn("/bin/sh", ["-c", "touch ran"], { cwd: t.ws }))
    expect(r.error).toBeInstanceOf(ConfinementError)
    expect((r.error as ConfinementError).reason).toBe("sandbox-unavailable")
    expect(r.code).toBeNull()
    expect(fs.existsSync(path.join(t.ws, "ran"))).toBe(false)
  })

  it("kill() before the command started cancels the launch", async () => {
    const t = sandboxTree()
    const child = spawner(t)("/bin/sh", ["-c", "touch ran"], { cwd: t.ws })
    child.kill("SIGTERM")
    const r = await outcome(child)
    expect((r.error as ConfinementError).reason).toBe("cancelled")
    expect(r.signal).toBe("SIGTERM")
    expect(fs.existsSync(path.join(t.ws, "ran"))).toBe(false)
  })
})
