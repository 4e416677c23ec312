/**
 * A fixer's command confined by `pinnedfs/confine`, narrowed to exactly the files it may write.
 *
 * Each launch's scope is its chunk of the allowlist plus the invocation's `mayCreate` names, every
 * one a file bound by itself from a descriptor the sandbox's final validation opened; no directory
 * of the workspace is writable. A `mayCreate` name that does not exist yet is first created empty
 * through the pinned root (the façade's `createEmpty`: policy, mandatory set and `mayCreate`
 * checked, missing parents made and checked), so there is a file to bind; after the run, one the
 * command left empty is removed again, with the directories made for it. A name that exists and is
 * not in the allowlist is not bound: the command may create, not overwrite. So a `mayCreate` glob
 * cannot be honoured here (it names no file; only a writable directory could serve it, and that
 * directory would open everything else in it), and is refused when the fixer is made.
 *
 * What this costs a tool: during the run each `mayCreate` name exists, empty. A tool that writes a
 * new file by renaming a temporary one onto it (an atomic save) gets `EROFS`/`EBUSY`, since only the
 * file is writable, not the directory it would rename within.
 *
 * The allowlist is cut into launches of at most {@link confinedLaunchFiles} files (with the
 * `mayCreate` names), as well as under the argument limit. Confine accepts up to `maxScopePaths`
 * (4096) in one launch, but bubblewrap's set-up grows with the square of the binds it makes (it
 * reads the whole mount table again for each): measured here on a loaded 2-core machine, a launch
 * binding 250 files started in 0.3 s, 500 in 0.8 s, 1,000 in 2.4 s, 2,000 in 14.7 s. Launches of 512
 * keep the cost per file near its floor while a tool's own start-up stays a small part of each.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import picomatch from "picomatch"
import { type Confinement, confinedSpawner, maxScopePaths } from "../../confine/index.ts"
import type { DevFileAccess } from "../DevFileAccess.ts"
import { workspacePath } from "../paths.ts"
import { escaped } from "../quote.ts"
import { chunked } from "./arguments.ts"
import type { Spawn } from "./external.ts"

/**
 * Refuses `mayCreate` globs for a confined fixer, naming the first.
 *
 * @since 0.1.0
 * @category constructors
 */
export const refuseGlobs = (name: string, mayCreate: ReadonlyArray<string>): void => {
  for (const g of mayCreate) {
    if (typeof g === "string" && picomatch.scan(g).isGlob) {
      throw new TypeError(
        `externalFixer '${escaped(name)}': a confined fixer's mayCreate names files, and '${escaped(g)}' is a glob: ` +
          "its sandbox could only honour it by making a whole directory writable, so name each file it may create"
      )
    }
  }
}

/**
 * A session confining another directory would leave this workspace read-only to the tool (its
 * edits would fail) while making that other directory writable: a mistake to report, not to run.
 * The same for a working directory other than the workspace: the appended names are relative to it.
 */
const sameWorkspace = async (confinement: Confinement, workspaceDir: string): Promise<void> => {
  const real = (p: string) => fs.promises.realpath(p)
  const [theirs, cwd, ours] = await Promise.all([real(confinement.target.workspace), real(confinement.target.cwd), real(workspaceDir)])
  if (theirs !== ours) {
    throw new Error(
      `the confinement's workspace '${escaped(theirs)}' is not this plan's workspace '${escaped(ours)}': the command was not run`
    )
  }
  if (cwd !== ours) {
    throw new Error(
      `the confinement's working directory '${escaped(cwd)}' is not the workspace '${escaped(ours)}': the command was not run`
    )
  }
}

/**
 * Most files one confined launch binds (see above for why not `maxScopePaths`).
 *
 * @since 0.1.0
 * @category constants
 */
export const confinedLaunchFiles = 512

/** @since 0.1.0 @category models */
export interface ConfinedRunner {
  /** The `mayCreate` names bound writable in every launch. */
  readonly bound: ReadonlyArray<string>
  /** The spawn for one chunk: a launch scoped to the chunk's files and the bound names. */
  readonly spawn: (chunk: ReadonlyArray<string>) => Spawn
  /** Removes what `createEmpty` made and the command left empty. */
  readonly finish: () => Promise<void>
}

/**
 * Prepares the confined runs of one invocation: checks the session, creates the `mayCreate` names.
 *
 * @since 0.1.0
 * @category running
 */
export const confinedRunner = async (
  confinement: Confinement,
  access: DevFileAccess,
  workspaceDir: string,
  mayCreate: ReadonlyArray<string>
): Promise<ConfinedRunner> => {
  await sameWorkspace(confinement, workspaceDir)
  const made: Array<string> = []
  const finish = async () => {
    for (const p of made.splice(0)) await access.removeIfEmpty(p)
  }
  try {
    for (const name of mayCreate) {
      const p = workspacePath(name, "mayCreate name")
      if (await access.createEmpty(p)) made.push(p)
    }
  } catch (e) {
    await finish()
    throw e
  }
  const bound = [...made]
  return {
    bound,
    // An appended `./-name` names the file `-name`.
    spawn: (chunk) => {
      const files = [...chunk.map((f) => (f.startsWith("./") ? f.slice(2) : f)), ...bound]
      const start = confinedSpawner(confinement, { scope: { files, directories: [] } })
      // No cwd: the sandbox starts in its target's working directory, checked above to be the
      // workspace. Passing one would add a second --chdir.
      return (command, args, options) => start(command, args, { env: options.env })
    },
    finish
  }
}

/**
 * The appended files cut into launches: under the argument limit, and few enough for one launch to
 * bind them with the `mayCreate` names.
 *
 * @since 0.1.0
 * @category running
 */
export const confinedChunks = (
  appended: ReadonlyArray<string>,
  fixed: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv,
  runner: ConfinedRunner
): Array<Array<string>> => {
  const perLaunch = Math.min(maxScopePaths, Math.max(confinedLaunchFiles, runner.bound.length + 1))
  const maxFiles = perLaunch - runner.bound.length
  if (runner.bound.length >= maxScopePaths) {
    throw new Error(`${runner.bound.length} mayCreate names leave no room in a launch of ${maxScopePaths} paths`)
  }
  // The TMPDIR the sandbox adds to the environment is within the wrapper reserve.
  return chunked(appended, fixed, env, { maxFiles })
}
