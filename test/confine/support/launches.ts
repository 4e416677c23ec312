/**
 * Real launches that wait for the test: each child prints `ready` once its sandbox runs and then
 * waits for one line on its stdin before it goes on, so a test can act on the host (another
 * launch's cleanup, a kill) at an exact moment while this launch's sandbox is live.
 */
import type { ChildProcess } from "node:child_process"
import { spawn } from "node:child_process"
import { expect } from "vitest"
import type { PreparedLaunch } from "../../../src/confine/index.ts"

export interface Waiting {
  /** Resolves once the child printed `ready`. */
  readonly ready: Promise<void>
  /** Sends the line the child waits for; resolves with its whole output once it exited. */
  readonly go: () => Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>
  readonly child: ChildProcess
}

const collect = (child: ChildProcess): Waiting => {
  let stdout = ""
  let stderr = ""
  let readyResolve!: () => void
  const ready = new Promise<void>((resolve) => {
    readyResolve = resolve
  })
  const closed = new Promise<number | null>((resolve) => child.once("close", (c) => resolve(c)))
  child.stdout!.setEncoding("utf8").on("data", (d: string) => {
    stdout += d
    if (stdout.includes("ready\n")) readyResolve()
  })
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d))
  void closed.then(() => readyResolve())
  return {
    ready,
    child,
    go: async () => {
      child.stdin!.end("go\n")
      const code = await closed
      return { code, stdout, stderr }
    }
  }
}

/** Starts `script` in a prepared launch: it runs after `echo ready; read line`. */
export const startWaiting = async (launch: PreparedLaunch, script: string): Promise<Waiting> => {
  const child = await launch.spawn("/bin/sh", ["-c", `echo ready; read line; ${script}`], { stdio: ["pipe", "pipe", "pipe"] })
  const w = collect(child)
  await w.ready
  expect(w.child.exitCode).toBeNull()
  return w
}

/** The same through a `pinnedfs run` process (a node child running the staged CLI). */
export const startWaitingCli = async (
  node: string,
  cli: string,
  args: ReadonlyArray<string>,
  script: string,
  options: { readonly cwd: string; readonly env: NodeJS.ProcessEnv }
): Promise<Waiting> => {
  const child = spawn(node, [cli, "run", ...args, "--", "/bin/sh", "-c", `echo ready; read line; ${script}`], {
    cwd: options.cwd,
    env: options.env,
    stdio: ["pipe", "pipe", "pipe"]
  })
  const w = collect(child)
  await w.ready
  expect(w.child.exitCode).toBeNull()
  return w
}

/** Resolves once every process holding the child's stdout (the sandbox's too) is gone. */
export const outputClosed = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.stdout!.readableEnded) return resolve()
    child.stdout!.once("end", () => resolve())
    child.stdout!.resume()
  })
