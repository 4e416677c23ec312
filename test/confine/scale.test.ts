/**
 * Many protected paths, and a launch whose process exits at once: the launch hands the child back
 * before any event of it can fire, so a caller's listener never misses its exit; a workspace with
 * 5,000 protected candidates is confined when they lie under one protected tree (one mount for
 * all), and refused with the count, status 125 and nothing left behind when they cannot be.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Confinement, ConfinementError } from "../../src/confine/index.ts"
import { strategies } from "../support/strategies.ts"
import { stagePackage } from "./support/stage.ts"
import { exec, type SandboxTree } from "./support/tree.ts"

// One tree for the whole file: 5,000 repositories under ws/vendor (2,000 of them under
// ws/vendor/a, a workspace of its own for the test that needs many held descriptors but few enough
// mounts for bubblewrap). Made once and removed once: removing 10,000 directories takes seconds
// on a loaded machine, and the tests only read it.
let t: SandboxTree
// More than bubblewrap's argument limit can mount one by one (three arguments a mount, at most
// 9,000 arguments), so that only one mount for the whole tree confines them; the benchmark
// prepares 20,001.
const candidates = 5_000
const dirs = { ws: "", small: "" }

beforeAll(() => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-confine-scale-"))
  fs.chmodSync(base, 0o755)
  const at = (...parts: Array<string>) => path.join(base, ...parts)
  for (const d of ["ws/.git", "home/.ssh", "tmp", "outside"]) fs.mkdirSync(at(d), { recursive: true })
  fs.writeFileSync(at("ws", "src.txt"), "source\n")
  for (let i = 0; i < candidates; i++) fs.mkdirSync(at("ws", "vendor", i < 2000 ? "a" : "b", `r${i}`, ".git"), { recursive: true })
  t = {
    base,
    ws: at("ws"),
    home: at("home"),
    outside: at("outside"),
    tmp: at("tmp"),
    at,
    write: () => undefined,
    read: (f) => fs.readFileSync(at(f), "utf8")
  }
  dirs.ws = at("ws")
  dirs.small = at("ws", "vendor", "a")
}, 300_000)

afterAll(() => {
  if (t) spawnSync("rm", ["-rf", t.base])
}, 600_000)

let cli = ""
beforeAll(() => {
  cli = path.join(stagePackage(), "fixtures", "cli.mjs")
})

describe.each(strategies)("many protected paths (%s)", (strategy) => {
  const session = (workspace: string, extra: Partial<ConstructorParameters<typeof Confinement>[0]> = {}) =>
    new Confinement({ target: { workspace, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") }, strategy, ...extra })

  it("a sandbox that exits at once, with 2,000 descriptors to release: refused at once, never a missed exit", async () => {
    // 2,000 held descriptors to release after the start, and a "bubblewrap" that exits at once.
    const fast = path.join(t.base, `exits-at-once-${strategy}`)
    fs.writeFileSync(fast, "#!/bin/sh\nexit 3\n", { mode: 0o755 })
    const launch = await session(dirs.small, { bwrap: fast }).prepare()
    expect(launch.plan.restrictions.filter((r) => r.path.startsWith(dirs.small)).length).toBeGreaterThan(2000)
    let timer: NodeJS.Timeout | undefined
    const outcome = await Promise.race([
      launch.spawn("/bin/true", [], { stdio: "ignore" }).then(
        (child) =>
          new Promise<unknown>((resolve) => {
            if (child.exitCode !== null) return resolve(child.exitCode)
            child.once("exit", (code) => resolve(code))
          }),
        (e: unknown) => e
      ),
      new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve("the exit event was missed"), 20_000)
      })
    ])
    clearTimeout(timer)
    expect(outcome).toBeInstanceOf(ConfinementError)
    expect((outcome as ConfinementError).reason).toBe("sandbox-unavailable")
    expect((outcome as ConfinementError).message).toMatch(/exited with 3/)
    expect((await launch.cleanup()).refused).toEqual([])
  }, 60_000)

  it("a command that exits at once, with 2,000 descriptors to release: a listener attached after spawn() sees its exit", async () => {
    const launch = await session(dirs.small).prepare()
    const child = await launch.spawn("/bin/sh", ["-c", "exit 7"], { stdio: "ignore" })
    let timer: NodeJS.Timeout | undefined
    const code = await Promise.race([
      new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c))),
      new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve("the exit event was missed"), 20_000)
      })
    ])
    clearTimeout(timer)
    expect(code).toBe(7)
    await launch.cleanup()
  }, 60_000)

  it("5,000 nested repositories under one protected tree: confined, with one mount for them all", async () => {
    const launch = await session(dirs.ws, { policy: { protected: [["vendor", "read-only"]] } }).prepare()
    expect(launch.plan.restrictions.filter((r) => r.path.startsWith(`${dirs.ws}/`)).map((r) => r.path)).toEqual([
      path.join(t.ws, ".git"),
      path.join(t.ws, "vendor")
    ])
    const child = await launch.spawn(
      "/bin/sh",
      ["-c", "echo x > vendor/a/r7/.git/config || echo vendor-denied; echo edit >> src.txt && echo edit-ok"],
      {
        stdio: ["ignore", "pipe", "ignore"]
      }
    )
    let stdout = ""
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    await new Promise((resolve) => child.once("close", resolve))
    await launch.cleanup()
    expect(stdout).toContain("vendor-denied")
    expect(stdout).toContain("edit-ok")
    expect(fs.existsSync(path.join(t.ws, "vendor", "a", "r7", ".git", "config"))).toBe(false)
  }, 120_000)
})

describe("pinnedfs run with 5,000 protected candidates", () => {
  it("that cannot share a mount: refused with 125 and the count, the command not run, nothing left behind", async () => {
    const r = await exec(process.execPath, [cli, "run", "--", "/bin/sh", "-c", "touch ran"], {
      cwd: t.ws,
      env: { ...process.env, HOME: t.home, TMPDIR: t.tmp, PINNEDFS_RUNTIME_DIR: t.at("run") }
    })
    expect(r.code).toBe(125)
    const counted = /cannot confine .*needs (\d+) bubblewrap arguments for (\d+) mounts.* at most 9000/.exec(r.stderr)
    expect(counted, r.stderr).not.toBeNull()
    expect(Number(counted![2])).toBeGreaterThan(candidates)
    expect(fs.existsSync(path.join(t.ws, "ran"))).toBe(false)
    expect(fs.readdirSync(t.tmp)).toEqual([]) // the private temporary root was removed
  }, 120_000)

  it("under one protected tree (--protect vendor=read-only): runs, exits with the command's status", async () => {
    const r = await exec(
      process.execPath,
      [
        cli,
        "run",
        "--protect",
        "vendor=read-only",
        "--",
        "/bin/sh",
        "-c",
        `test -d vendor/b/r${candidates - 1}/.git && { echo x > vendor/b/r${candidates - 1}/.git/x || echo denied; }; exit 4`
      ],
      { cwd: t.ws, env: { ...process.env, HOME: t.home, TMPDIR: t.tmp, PINNEDFS_RUNTIME_DIR: t.at("run") } }
    )
    expect(r.stderr).not.toMatch(/cannot confine/)
    expect(r.stdout).toContain("denied")
    expect(r.code).toBe(4)
    // The private temporary root was removed, and no record of the launch stays in its own runtime directory.
    expect(fs.readdirSync(t.tmp)).toEqual([])
    expect(fs.readdirSync(t.at("run"))).toEqual([])
  }, 120_000)
})
