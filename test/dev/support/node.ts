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
