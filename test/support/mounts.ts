/**
 * Bind mounts, for the tests that cross one. `cannotMount` says why this machine cannot make one
 * ("" when it can: root, in a mount namespace that allows it), so a test that needs one skips
 * saying why; `useBindMounts` answers a `bind` whose mounts are lazily unmounted after each test of
 * the calling file, so a failed assertion never leaves a mount behind.
 */
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach } from "vitest"

export const cannotMount: string = (() => {
  const probe = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-mount-probe-"))
  const target = path.join(probe, "target")
  fs.mkdirSync(target)
  const r = spawnSync("mount", ["--bind", probe, target], { encoding: "utf8" })
  if (r.status === 0) spawnSync("umount", [target])
  fs.rmSync(probe, { recursive: true, force: true })
  return r.status === 0 ? "" : `mount --bind failed (${(r.stderr || r.error?.message || "").trim()})`
})()

/** Registers the unmounting for the calling test file; answers `bind(from, onto)`. */
export const useBindMounts = (): ((from: string, onto: string) => void) => {
  const mounted: Array<string> = []
  afterEach(() => {
    for (const at of mounted.splice(0).reverse()) spawnSync("umount", ["-l", at])
  })
  return (from, onto) => {
    execFileSync("mount", ["--bind", from, onto])
    mounted.push(onto)
  }
}
