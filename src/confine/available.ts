/**
 * Whether this machine can confine a command at all: the sandbox program is there, and it can
 * build a sandbox for this user (bubblewrap needs user namespaces unless it is setuid, and some
 * systems turn them off). A program that confines by default asks this once, up front, so that a
 * missing sandbox is a clear refusal before any work, never an unconfined run.
 *
 * @since 0.1.0
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { bwrapArguments } from "./bwrap.ts"
import { ConfinementError } from "./errors.ts"

// Where `bwrap` was found on PATH, once per process: its location is not an observation a launch
// relies on (a bubblewrap gone since fails to start, and that launch is refused).
let foundBwrap: string | undefined

/** The bubblewrap executable: `given`, or `bwrap` on PATH. @internal */
export const findBwrap = async (given: string | undefined): Promise<string> => {
  if (given === undefined && foundBwrap !== undefined) return foundBwrap
  const candidates =
    given !== undefined
      ? [given]
      : (process.env["PATH"] ?? "/usr/bin:/bin")
          .split(":")
          .filter(Boolean)
          .map((d) => path.join(d, "bwrap"))
  for (const c of candidates) {
    try {
      await fs.promises.access(c, fs.constants.X_OK)
      if (given === undefined) foundBwrap = c
      return c
    } catch {
      // next
    }
  }
  throw new ConfinementError(
    "sandbox-unavailable",
    given !== undefined
      ? `bubblewrap is not executable at '${given}'`
      : "bubblewrap (bwrap) is not installed or not on PATH (Debian: apt-get install bubblewrap)"
  )
}

/** @since 0.1.0 @category models */
export type SandboxAvailability =
  | { readonly available: true; readonly sandbox: "bubblewrap" | "sandbox-exec"; readonly executable: string }
  | { readonly available: false; readonly reason: string }

const setting = (file: string): Promise<string | null> =>
  fs.promises.readFile(file, "utf8").then(
    (text) => text.trim(),
    () => null
  )

/**
 * Why user namespaces may be refused here, and how to allow them: each setting that refuses them,
 * or the three that can when none of them reads as refusing (a sandbox needs one user namespace
 * unless bubblewrap is setuid).
 *
 * @since 0.1.0
 */
export const userNamespaceAdvice = async (): Promise<string> => {
  const [clone, most, apparmor] = await Promise.all([
    setting("/proc/sys/kernel/unprivileged_userns_clone"),
    setting("/proc/sys/user/max_user_namespaces"),
    setting("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
  ])
  const found: Array<string> = []
  if (clone === "0") found.push("kernel.unprivileged_userns_clone is 0: allow them with `sysctl -w kernel.unprivileged_userns_clone=1`")
  if (most === "0") found.push("user.max_user_namespaces is 0: allow them with `sysctl -w user.max_user_namespaces=15000`")
  if (apparmor === "1") {
    found.push(
      "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns is 1, Ubuntu 23.10 and later): " +
        "give bwrap an AppArmor profile that allows `userns`, or run `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`"
    )
  }
  const persist = " (as root; a file in /etc/sysctl.d keeps it across reboots)"
  if (found.length > 0) return `${found.join("; ")}${persist}`
  return (
    "user namespaces may be refused here: check kernel.unprivileged_userns_clone (1 allows them), user.max_user_namespaces " +
    `(above 0) and, on Ubuntu, kernel.apparmor_restrict_unprivileged_userns (0, or an AppArmor profile for bwrap that allows \`userns\`)${persist}`
  )
}

const runs = (executable: string, args: ReadonlyArray<string>): Promise<string | null> =>
  new Promise((resolve) => {
    let stderr = ""
    const child = spawn(executable, [...args], { stdio: ["ignore", "ignore", "pipe"] })
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr = (stderr + d).slice(-2000)))
    child.once("error", (e) => resolve(e.message))
    child.once("close", (code, signal) => resolve(code === 0 ? null : stderr.trim() || `exited with ${code ?? signal}`))
  })

/**
 * Finds the sandbox program and has it build one trivial sandbox with the isolation every launch
 * uses (Linux: PID, IPC and network namespaces, a new session, every capability dropped).
 * When it cannot, the reason says how to allow user namespaces if they may be what is missing.
 *
 * @since 0.1.0
 */
export const sandboxAvailable = async (options: { readonly bwrap?: string | undefined } = {}): Promise<SandboxAvailability> => {
  if (process.platform === "linux") {
    let bwrap: string
    try {
      bwrap = await findBwrap(options.bwrap)
    } catch (e) {
      return { available: false, reason: (e as Error).message }
    }
    const shell = fs.existsSync("/bin/sh") ? ["/bin/sh", "-c", "exit 0"] : [process.execPath, "-e", ""]
    // The same fixed hardening every launch starts with, over no layers: what the probe proves is
    // what a launch needs, and the two cannot drift apart.
    const hardening = bwrapArguments({ mode: "confined", network: "none", layers: [], remountReadOnly: [], cwd: "/" })
    const failed = await runs(bwrap, [...hardening.filter((a) => typeof a === "string"), "--", ...shell])
    if (failed === null) return { available: true, sandbox: "bubblewrap", executable: bwrap }
    const namespaces = process.geteuid?.() !== 0 || /namespace|uid map|userns/i.test(failed)
    return {
      available: false,
      reason: `bubblewrap cannot build a sandbox for this user here (${failed})${namespaces ? `: ${await userNamespaceAdvice()}` : ""}`
    }
  }
  if (process.platform === "darwin") {
    const failed = await runs("/usr/bin/sandbox-exec", ["-p", "(version 1)(allow default)", "/usr/bin/true"])
    return failed === null
      ? { available: true, sandbox: "sandbox-exec", executable: "/usr/bin/sandbox-exec" }
      : { available: false, reason: `sandbox-exec cannot run here: ${failed}` }
  }
  return { available: false, reason: `no sandbox is known on ${process.platform}` }
}
