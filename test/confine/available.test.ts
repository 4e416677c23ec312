/**
 * `sandboxAvailable`: whether this machine can confine a command, and why not. The negative
 * answers are forced with a bubblewrap that is missing or that fails to build the sandbox.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { expect, it } from "vitest"
import { sandboxAvailable } from "../../src/confine/index.ts"
import { bwrapOnPath } from "../support/nobody.ts"
import { skipUnless } from "../support/skip.ts"

it("answers available with the bubblewrap it used when a sandbox can be built", async (ctx) => {
  const bwrap = bwrapOnPath()
  skipUnless(
    ctx,
    process.platform === "linux" && fs.existsSync(bwrap),
    process.platform !== "linux" ? "bubblewrap is Linux's" : `no ${bwrap} here (apt-get install bubblewrap)`
  )
  expect(await sandboxAvailable({ bwrap })).toEqual({ available: true, sandbox: "bubblewrap", executable: bwrap })
})

it("answers unavailable, saying why, for a missing bubblewrap and for one that cannot build a sandbox", async (ctx) => {
  skipUnless(ctx, process.platform === "linux", "bubblewrap is Linux's")
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-nobwrap-"))
  const missing = path.join(dir, "bwrap")
  expect(await sandboxAvailable({ bwrap: missing })).toEqual({ available: false, reason: `bubblewrap is not executable at '${missing}'` })
  fs.rmdirSync(dir)
  const failing = await sandboxAvailable({ bwrap: "/bin/false" })
  expect(failing.available).toBe(false)
  expect(!failing.available && failing.reason).toMatch(/^bubblewrap cannot build a sandbox for this user here \(exited with 1\)/)
})
