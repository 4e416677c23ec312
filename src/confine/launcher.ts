/**
 * The launcher (`native/launcher`): a small executable that runs inside the sandbox between
 * bubblewrap and the command. bubblewrap hands the command every descriptor it was started with,
 * and libuv's spawn closes only the ones marked close-on-exec, so a descriptor the program that
 * called pinnedfs left open (a handle on a protected directory, a socket) would reach the command
 * whatever the mounts say. The launcher closes everything but stdin, stdout, stderr and what the
 * caller passed on purpose, waits for the supervisor's go-ahead, and then executes the command (127
 * when there is none, 126 when it cannot be executed).
 *
 * It is built beside the addon (`build/Release/` from source, `prebuilds/<platform>/` in the
 * published package), and each launch opens it once: bubblewrap executes that descriptor through
 * the sandbox's own `/proc`, so the launcher runs even where its path is masked inside.
 *
 * @internal
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { ConfinementError } from "./errors.ts"

const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..")

// Beside the addon node-gyp-build loads, found once per process (like bubblewrap on PATH).
let found: string | undefined

/** The launcher's path: `given`, else beside the addon this process loaded. */
export const launcherPath = (given: string | undefined): string => {
  if (given !== undefined) return given
  if (found === undefined) {
    const nodeGypBuild = createRequire(import.meta.url)("node-gyp-build") as { path(dir: string): string }
    found = path.join(path.dirname(nodeGypBuild.path(packageRoot)), "pinnedfs-launch")
  }
  return found
}

const missing = (file: string, why: string) =>
  new ConfinementError(
    "sandbox-unavailable",
    `the sandbox launcher '${file}' ${why}: the package is incomplete (reinstall it, or build it from source with \`npm rebuild pinnedfs\`)`
  )

/**
 * Opens the launcher for one launch (the caller closes it once the sandbox has started), refusing
 * one that is not an executable regular file.
 */
export const openLauncher = async (given: string | undefined): Promise<fs.promises.FileHandle> => {
  const file = launcherPath(given)
  let handle: fs.promises.FileHandle
  try {
    handle = await fs.promises.open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW)
  } catch (e) {
    throw missing(file, `cannot be opened (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`)
  }
  const st = await handle.stat().catch(() => null)
  if (st === null || !st.isFile() || (st.mode & 0o111) === 0) {
    await handle.close()
    throw missing(file, "is not an executable file")
  }
  return handle
}
