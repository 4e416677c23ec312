/**
 * The private temporary root is the child's own, and is removed whatever the child left in it: a
 * directory it closed with `chmod 000` or `chmod 555` (as an unprivileged user, whose permissions
 * count), and trees deeper than any recursion or path bound (400 levels of 12-byte names is a path
 * past PATH_MAX). Repeated launches leave nothing in the host's temporary directory.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { asRoot, NOBODY } from "../support/ids.ts"
import { nobodysBwrap, nodeForNobody, pathForNobody } from "../support/nobody.ts"
import { strategies } from "../support/strategies.ts"
import { stagePackage } from "./support/stage.ts"
import { exec, sandboxTree } from "./support/tree.ts"
import { skipUnless } from "../support/skip.ts"

const ids = asRoot ? { uid: NOBODY, gid: NOBODY } : {}
const probe = spawnSync(nobodysBwrap(), ["--ro-bind", "/", "/", "--unshare-pid", "--cap-drop", "ALL", "/bin/true"], {
  ...ids,
  encoding: "utf8"
})
const bwrapWorks = probe.status === 0
const why = `bubblewrap cannot build a sandbox as uid ${asRoot ? NOBODY : process.getuid?.()} here: ${probe.error?.message ?? probe.stderr.trim()}`

let cli = ""
let launcher = ""
beforeAll(() => {
  cli = path.join(stagePackage(), "fixtures", "cli.mjs")
  launcher = path.join(stagePackage(), "fixtures", "launch.mjs")
})

// What the child leaves in its TMPDIR: closed directories with content, and two deep trees.
const mess = [
  'cd "$TMPDIR"',
  "mkdir -p locked/inner && echo x > locked/inner/f && chmod 000 locked",
  "mkdir -p sealed/sub && echo x > sealed/f && echo x > sealed/sub/g && chmod 555 sealed/sub sealed",
  "(i=0; while [ $i -lt 300 ]; do mkdir d && cd -P d || exit 1; i=$((i+1)); done; echo leaf > leaf; chmod 000 .)",
  "(i=0; while [ $i -lt 400 ]; do mkdir level-name-x && cd -P level-name-x || exit 1; i=$((i+1)); done; echo leaf > leaf)",
  "ls -A"
].join(" && ")

// `pinnedfs run` (the default strategy), then the API under each strategy.
const ways: Array<[string, () => Array<string>]> = [
  ["pinnedfs run", () => [cli, "run", "--"]],
  ...strategies.map((st): [string, () => Array<string>] => [`the API, ${st}`, () => [launcher, st]])
]

describe.each(ways)("the private temporary root (%s)", (_how, argv) => {
  it("is removed whole after each launch, as an unprivileged user, whatever the child left in it", { timeout: 120_000 }, async (ctx) => {
    skipUnless(ctx, bwrapWorks, why)
    const t = sandboxTree()
    if (asRoot) fs.chownSync(t.ws, NOBODY, NOBODY)
    // As nobody: the default runtime directory, in this tree's TMPDIR (nobody cannot make the tree's own).
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: pathForNobody(), HOME: t.home, TMPDIR: t.tmp }
    delete env["PINNEDFS_RUNTIME_DIR"]
    for (let launch = 0; launch < 3; launch++) {
      const r = await exec(nodeForNobody(), [...argv(), "/bin/sh", "-c", mess], { ...ids, cwd: t.ws, env })
      expect(r.stderr).toBe("")
      expect(r.code).toBe(0)
      // The mess was made (the attack was live), in a private root the launch then removed.
      expect(r.stdout.split("\n")).toEqual(expect.arrayContaining(["locked", "sealed", "d", "level-name-x"]))
      expect(fs.readdirSync(t.tmp).filter((n) => n.startsWith("pinnedfs-confine-"))).toEqual([])
    }
  })
})
