/**
 * Runs `node` in a child process to its exit, collecting what it printed.
 */
import { spawn } from "node:child_process"

export interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export const runNode = (args: ReadonlyArray<string>, options: { readonly cwd: string; readonly env?: NodeJS.ProcessEnv }): Promise<Ran> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...args], {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

/** {@link runNode}, failing unless the child exits 0; answers its stdout. */
export const runNodeOk = async (args: ReadonlyArray<string>, options: { readonly cwd: string }): Promise<string> => {
  const r = await runNode(args, options)
  if (r.code !== 0) throw new Error(`node exited with ${r.code}: ${r.stderr}`)
  return r.stdout
}

/**
 * {@link runNode} with some of the child's output pipes already closed at the reading end before
 * `node` starts (`pinnedfs fix --help | head -1` once `head` has gone): a shell waits for a line on
 * stdin, which is sent only when the parent's ends of the closed pipes are gone, then becomes node.
 * Every write the child makes to a closed pipe fails with `EPIPE`, deterministically.
 */
export const runNodeIntoClosed = (
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly closed: ReadonlyArray<"stdout" | "stderr"> }
): Promise<Ran> =>
  new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", 'read line; exec "$0" "$@"', process.execPath, ...args], {
      cwd: options.cwd,
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.on("error", reject)
    const ends = { stdout: child.stdout, stderr: child.stderr }
    for (const name of ["stdout", "stderr"] as const) {
      if (options.closed.includes(name)) continue
      ends[name].on("data", (d: Buffer) => (name === "stdout" ? (stdout += d.toString()) : (stderr += d.toString())))
    }
    const closing = options.closed.map(
      (name) => new Promise<void>((done) => (ends[name].destroyed ? done() : ends[name].once("close", () => done()).destroy()))
    )
    void Promise.all(closing).then(() => child.stdin.end("go\n"))
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })
