/**
 * `pinnedfs run`'s exit statuses, as shells and `env`/`timeout` use them, from real launches: 127
 * for a command that is not found, 126 for one that cannot be executed, 2 for a usage error, 125
 * only for a launch that cannot be confined, the command's own status otherwise (its own 125
 * included, told apart by `--status-fd`); and when user namespaces are refused, a message that says
 * how to allow them.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { asRoot } from "../support/ids.ts"
import { nodeForNobody, pathForNobody } from "../support/nobody.ts"
import { skipUnless } from "../support/skip.ts"
import { stagePackage } from "./support/stage.ts"
import { exec, sandboxTree, type SandboxTree } from "./support/tree.ts"

let cli = ""
beforeAll(() => {
  cli = path.join(stagePackage(), "fixtures", "cli.mjs")
})

const pinnedfs = (t: SandboxTree, args: ReadonlyArray<string>) =>
  exec(process.execPath, [cli, ...args], {
    cwd: t.ws,
    env: { ...process.env, HOME: t.home, TMPDIR: t.tmp, PINNEDFS_RUNTIME_DIR: t.at("run") }
  })

describe("pinnedfs run's exit statuses", () => {
  it("127 for a command that is not found, on PATH or by path", async () => {
    const t = sandboxTree()
    const onPath = await pinnedfs(t, ["run", "--", "pinnedfs-no-such-command", "x"])
    expect(onPath.code).toBe(127)
    expect(onPath.stderr).toMatch(/pinnedfs-no-such-command: command not found/)
    expect(onPath.stderr).not.toMatch(/cannot confine|bwrap/)
    const byPath = await pinnedfs(t, ["run", "--", "./missing"])
    expect(byPath.code).toBe(127)
    expect(byPath.stderr).toMatch(/\.\/missing: No such file or directory/)
  })

  it("126 for a command that cannot be executed: a file without execute permission, a directory", async () => {
    const t = sandboxTree()
    t.write("ws/plain.sh", "#!/bin/sh\necho ran\n")
    const plain = await pinnedfs(t, ["run", "--", "./plain.sh"])
    expect(plain.code).toBe(126)
    expect(plain.stderr).toMatch(/\.\/plain\.sh: Permission denied/)
    expect(plain.stdout).toBe("")
    const dir = await pinnedfs(t, ["run", "--", t.outside])
    expect(dir.code).toBe(126)
  })

  it("2 for a usage error: a bad --protect, --grant, --network or --allow-agent, a missing workspace, an unknown option", async () => {
    const t = sandboxTree()
    const cases: Array<[ReadonlyArray<string>, RegExp]> = [
      [["--protect", "secrets"], /GLOB=read-only\|inaccessible/],
      [["--protect", "x=hidden"], /read-only or inaccessible/],
      [["--protect", "!x=inaccessible"], /negated/],
      [["--grant", "a.txt=rw"], /PATH=read or PATH=write/],
      [["--grant", "=write"], /PATH=read\|write/],
      [["--network", "off"], /none or host/],
      [["--allow-agent", "nope"], /unknown agent/],
      [["--unprotect", "~/.nothing"], /names no default rule/],
      [["--workspace", t.at("no-such-workspace")], /does not exist/],
      [["--status-fd", "x"], /descriptor number/],
      [["--no-such-option"], /unknown option/]
    ]
    for (const [options, message] of cases) {
      const r = await pinnedfs(t, ["run", ...options, "--", "/bin/sh", "-c", `touch '${t.ws}/ran'`])
      expect([options, r.code]).toEqual([options, 2])
      expect(r.stderr).toMatch(message)
      expect(r.stderr).not.toMatch(/cannot confine/)
    }
    // No command at all, and a command given to --cleanup (which runs none): usage errors too.
    const none = await pinnedfs(t, ["run"])
    expect([none.code, none.stderr]).toEqual([2, "pinnedfs run: missing required argument 'command' (see pinnedfs run --help)\n"])
    const both = await pinnedfs(t, ["run", "--cleanup", "--", "/bin/sh", "-c", `touch '${t.ws}/ran'`])
    expect([both.code, both.stdout]).toEqual([2, ""])
    expect(both.stderr).toMatch(/--cleanup runs no command/)
    expect(fs.existsSync(path.join(t.ws, "ran"))).toBe(false)
  })

  it("125 only when it cannot confine; the command's own 125 passes through, and --status-fd tells them apart", async () => {
    const t = sandboxTree()
    // `exit 125` under pinnedfs run, its status written to descriptor 3.
    const exit125 = () =>
      spawnSync(process.execPath, [cli, "run", "--status-fd", "3", "--", "/bin/sh", "-c", "exit 125"], {
        cwd: t.ws,
        env: { ...process.env, HOME: t.home, TMPDIR: t.tmp, PINNEDFS_RUNTIME_DIR: t.at("run") },
        stdio: ["ignore", "pipe", "pipe", "pipe"],
        encoding: "utf8"
      })
    const own = exit125()
    expect(own.status).toBe(125)
    expect(own.stderr).toBe("")
    expect(JSON.parse(own.output[3] as string)).toEqual({ ran: true, status: 125, code: 125, signal: null })
    fs.symlinkSync(t.outside, path.join(t.ws, "lib.git"))
    fs.rmSync(path.join(t.ws, ".git"), { recursive: true })
    fs.symlinkSync(t.outside, path.join(t.ws, ".git"))
    const refused = exit125()
    expect(refused.status).toBe(125)
    expect(refused.stderr).toMatch(/^pinnedfs run: cannot confine \/bin\/sh: .*symbolic link/)
    expect(JSON.parse(refused.output[3] as string)).toEqual(expect.objectContaining({ ran: false, status: 125, reason: "link" }))
  })
})

// User namespaces refused for an unprivileged user, for real: a user namespace (made by root) where
// user.max_user_namespaces is 0, with pinnedfs run as nobody inside it.
const refuser = `
import ctypes, os, sys
r, w = os.pipe(); r2, w2 = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(w); os.close(r2)
    if ctypes.CDLL(None, use_errno=True).unshare(0x10000000) != 0: sys.exit("unshare: " + os.strerror(ctypes.get_errno()))
    os.write(w2, b"u"); os.close(w2); os.read(r, 1)
    open("/proc/sys/user/max_user_namespaces", "w").write("0")
    os.setgroups([]); os.setgid(65534); os.setuid(65534)
    os.execv(sys.argv[1], sys.argv[1:])
os.close(r); os.close(w2); os.read(r2, 1)
for name in ("uid_map", "gid_map"): open(f"/proc/{pid}/{name}", "w").write("0 0 1\\n65534 65534 1\\n")
os.write(w, b"g"); os.close(w)
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
`
const python = ["/usr/bin/python3", "/usr/local/bin/python3"].find((p) => fs.existsSync(p))
it("when user namespaces are refused: 125, and how to allow them", async (ctx) => {
  skipUnless(
    ctx,
    asRoot && python !== undefined,
    !asRoot ? "only root can make a user namespace that refuses them for nobody" : "no python3 to make the namespace"
  )
  const t = sandboxTree()
  for (const p of ["ws", "tmp"]) fs.chownSync(t.at(p), 65534, 65534)
  const r = await exec(python!, ["-c", refuser, nodeForNobody(), cli, "run", "--", "/bin/sh", "-c", `touch '${t.ws}/ran'`], {
    cwd: t.ws,
    env: { ...process.env, PATH: pathForNobody(), HOME: t.home, TMPDIR: t.tmp } // as nobody: the default runtime directory, in this TMPDIR
  })
  expect(r.code).toBe(125)
  expect(r.stderr).toMatch(/cannot confine \/bin\/sh: bubblewrap cannot build a sandbox for this user here/)
  expect(r.stderr).toMatch(/user\.max_user_namespaces is 0: allow them with `sysctl -w user\.max_user_namespaces=15000`/)
  expect(fs.existsSync(path.join(t.ws, "ran"))).toBe(false)
})
