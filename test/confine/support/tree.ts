/**
 * Sandbox trees for confinement tests: a workspace, a fake home with a key, an outside directory
 * and a temporary root, under one world-readable base so an unprivileged child can reach them
 * even when the checkout itself is closed to others.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { expect } from "vitest"
import { ConfinementError, type PreparedLaunch } from "../../../src/confine/index.ts"
import { registerScratch } from "../../support/tree.ts"

export interface SandboxTree {
  readonly base: string
  readonly ws: string
  readonly home: string
  readonly outside: string
  readonly tmp: string
  readonly at: (...parts: Array<string>) => string
  readonly write: (file: string, content: string) => void
  readonly read: (file: string) => string
}

export const sandboxTree = (): SandboxTree => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-confine-test-"))
  registerScratch(base) // removed after the test; its descriptors are the ones leak checks count
  fs.chmodSync(base, 0o755)
  const ws = path.join(base, "ws")
  const home = path.join(base, "home")
  const outside = path.join(base, "outside")
  const tmp = path.join(base, "tmp")
  for (const d of [ws, home, outside, tmp]) fs.mkdirSync(d, { mode: 0o755 })
  for (const d of [ws, tmp]) fs.chmodSync(d, 0o777) // an unprivileged child may write its own roots
  fs.mkdirSync(path.join(ws, ".git"), { mode: 0o755 })
  fs.writeFileSync(path.join(ws, ".git", "config"), "[core]\n")
  fs.writeFileSync(path.join(ws, "src.txt"), "source\n")
  fs.chmodSync(path.join(ws, "src.txt"), 0o666)
  fs.mkdirSync(path.join(home, ".ssh"), { mode: 0o755 })
  fs.writeFileSync(path.join(home, ".ssh", "id_ed25519"), "PRIVATE KEY\n", { mode: 0o644 })
  fs.writeFileSync(path.join(outside, "keep.txt"), "outside\n", { mode: 0o666 })
  fs.chmodSync(outside, 0o777) // writable to anyone on the host: only the sandbox stops the child
  const at = (...parts: Array<string>) => path.join(base, ...parts)
  return {
    base,
    ws,
    home,
    outside,
    tmp,
    at,
    write: (file, content) => {
      fs.mkdirSync(path.dirname(at(file)), { recursive: true })
      fs.writeFileSync(at(file), content)
    },
    read: (file) => fs.readFileSync(at(file), "utf8")
  }
}

export interface Outcome {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  readonly started: boolean
}

/** Runs a shell script in a prepared launch, collecting its output; cleans the launch up. */
export const runScript = async (launch: PreparedLaunch, script: string): Promise<Outcome> => {
  const child = await launch.spawn("/bin/sh", ["-c", script], { stdio: ["ignore", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d))
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d))
  const code = await new Promise<number | null>((resolve) => child.once("close", (c) => resolve(c)))
  const started = await launch.started
  await launch.cleanup()
  return { code, stdout, stderr, started }
}

/**
 * Runs `script` with /bin/sh in a prepared launch and cleans the launch up: what it printed, and
 * the launch's plan. Its stderr goes to the run's unless `env` is given (then it is drained).
 */
export const runShell = async (
  launch: PreparedLaunch,
  script: string,
  env?: NodeJS.ProcessEnv
): Promise<{ stdout: string; plan: PreparedLaunch["plan"] }> => {
  const child = await launch.spawn("/bin/sh", ["-c", script], {
    ...(env === undefined ? {} : { env }),
    stdio: ["ignore", "pipe", env === undefined ? "inherit" : "pipe"]
  })
  let stdout = ""
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d))
  child.stderr?.resume()
  await new Promise((resolve) => child.once("close", resolve))
  await launch.cleanup()
  return { stdout, plan: launch.plan }
}

/** Runs a command to completion outside any sandbox. */
export const exec = (
  command: string,
  args: ReadonlyArray<string>,
  options: { uid?: number; gid?: number; env?: NodeJS.ProcessEnv; cwd?: string } = {}
) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
    child.once("error", reject)
    child.once("close", (code) => resolve({ code, stdout, stderr }))
  })

/** The ConfinementError a promise rejects with (failing the test when it resolves or rejects otherwise). */
export const refusal = async (p: Promise<unknown>): Promise<ConfinementError> => {
  const e = await p.then(
    () => undefined,
    (e: unknown) => e
  )
  expect(e).toBeInstanceOf(ConfinementError)
  return e as ConfinementError
}

/** Every word appears in the output, and none of the forbidden ones does. */
export const expectOutput = (out: string, words: ReadonlyArray<string>, forbidden: ReadonlyArray<string> = []): void => {
  for (const w of words) expect(out).toContain(w)
  for (const w of forbidden) expect(out).not.toContain(w)
}

/** Runs `script` in the launch and expects every word (and none of the forbidden) in what it printed. */
export const expectScript = async (
  launch: PreparedLaunch,
  script: string,
  words: ReadonlyArray<string>,
  forbidden: ReadonlyArray<string> = []
): Promise<Outcome> => {
  const r = await runScript(launch, script)
  expectOutput(r.stdout, words, forbidden)
  return r
}
