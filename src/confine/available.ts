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
 * uses (Linux: a PID namespace, a new session, every capability dropped).
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
    const failed = await runs(bwrap, [
      "--die-with-parent",
      "--new-session",
      "--unshare-pid",
      "--cap-drop",
      "ALL",
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--proc",
      "/proc",
      "--",
      ...shell
    ])
    return failed === null
      ? { available: true, sandbox: "bubblewrap", executable: bwrap }
      : { available: false, reason: `bubblewrap cannot build a sandbox for this user here (${failed}); user namespaces may be disabled` }
  }
  if (process.platform === "darwin") {
    const failed = await runs("/usr/bin/sandbox-exec", ["-p", "(version 1)(allow default)", "/usr/bin/true"])
    return failed === null
      ? { available: true, sandbox: "sandbox-exec", executable: "/usr/bin/sandbox-exec" }
      : { available: false, reason: `sandbox-exec cannot run here: ${failed}` }
  }
  return { available: false, reason: `no sandbox is known on ${process.platform}` }
}
