/**
 * Splitting a fixer's file list into argument lists the system will accept.
 *
 * `execve` refuses (`E2BIG`) an argument list and environment whose strings, with their NUL bytes
 * and one pointer each, exceed the limit the kernel derives from the stack limit: a quarter of
 * `RLIMIT_STACK`, at most three quarters of the kernel's 8 MiB stack default (6 MiB), never less
 * than 128 KiB. `getconf ARG_MAX` answers the first part (glibc's `sysconf` computes it from the
 * stack limit this process has, which a child inherits); the 6 MiB ceiling is the kernel's and
 * applied here. The environment is measured as it will be passed, strings and pointers. What is
 * left, less a reserve for wrappers that add to it (measured: `npx` adds 33 variables, 1.3 KB here;
 * bubblewrap adds `TMPDIR` and its own options), is what the command, its arguments and the files
 * may use; the files are then cut into chunks that each fit.
 *
 * @since 0.1.0
 */
import { execFileSync } from "node:child_process"

/** The kernel's floor and ceiling for the argument space (`ARG_MAX` pages, 3/4 of `_STK_LIM`). */
const floor = 128 * 1024
const ceiling = 6 * 1024 * 1024
/** Room kept for what a wrapper adds (a shell, `npx`, the sandbox's own arguments). */
export const wrapperReserve = 32 * 1024
/** One argument's longest string (`MAX_ARG_STRLEN`, 32 pages). */
export const maxArgumentBytes = 32 * 4096
const pointer = 8

let measured: number | undefined

/**
 * The argument space `execve` gives this process's children: `getconf ARG_MAX`, clamped to what
 * the kernel applies. Measured once per process.
 *
 * @since 0.1.0
 * @category limits
 */
export const argumentSpace = (): number => {
  if (measured !== undefined) return measured
  let value = floor
  try {
    const answer = Number(execFileSync("getconf", ["ARG_MAX"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim())
    if (Number.isSafeInteger(answer) && answer > 0) value = answer
  } catch {
    // No getconf: the floor the kernel always grants.
  }
  measured = Math.min(ceiling, Math.max(floor, value))
  return measured
}

/** Bytes one argument or environment string costs: its UTF-8 bytes, its NUL, its pointer. */
export const stringCost = (s: string): number => Buffer.byteLength(s, "utf8") + 1 + pointer

/**
 * Bytes `env` costs as `execve` counts them (`NAME=value` strings, NULs, pointers, the final null).
 *
 * @since 0.1.0
 * @category limits
 */
export const environmentCost = (env: NodeJS.ProcessEnv): number => {
  let n = pointer
  for (const [k, v] of Object.entries(env)) if (v !== undefined) n += stringCost(`${k}=${v}`)
  return n
}

/**
 * `files` cut into chunks, in order, each of which fits with `fixed` (the command and its own
 * arguments) under `space` less the environment and the wrapper reserve, and none longer than
 * `maxFiles`. A file whose name alone cannot be an argument is refused, naming it.
 *
 * @since 0.1.0
 * @category limits
 */
export const chunked = (
  files: ReadonlyArray<string>,
  fixed: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv,
  options: { readonly space?: number | undefined; readonly maxFiles?: number | undefined } = {}
): Array<Array<string>> => {
  const space = options.space ?? argumentSpace()
  const maxFiles = options.maxFiles ?? Number.MAX_SAFE_INTEGER
  const budget = space - environmentCost(env) - wrapperReserve - fixed.reduce((n, a) => n + stringCost(a), pointer)
  if (budget < stringCost("x")) {
    throw new Error(
      `the environment (${environmentCost(env)} bytes) and the command leave no room for a file name under the ${space}-byte argument limit`
    )
  }
  const out: Array<Array<string>> = []
  let current: Array<string> = []
  let used = 0
  for (const f of files) {
    const cost = stringCost(f)
    if (Buffer.byteLength(f, "utf8") >= maxArgumentBytes || cost > budget) {
      throw new Error(`a file name of ${Buffer.byteLength(f, "utf8")} bytes is too long to pass as an argument`)
    }
    if (current.length > 0 && (used + cost > budget || current.length >= maxFiles)) {
      out.push(current)
      current = []
      used = 0
    }
    current.push(f)
    used += cost
  }
  if (current.length > 0) out.push(current)
  return out
}
