/**
 * The allowed directories of a session, each pinned: one `PinnedRoot` per directory, reached under
 * every spelling the reference server accepts for it (the argument as given and its real path, or
 * a root's real path). A set is built once, from the command line or from the client's roots, and
 * replaced whole; a call takes the set in force when it starts and keeps it to its end.
 *
 * Pinning here is the one moment a directory's path is trusted: from then on every call resolves
 * from the pinned handle and first checks, in the same trip, that the spelling it came through
 * still names that directory. A directory replaced, moved or removed mid-session is refused by its
 * identity, never followed to whatever its path names now.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { PinnedRoot, type Strategy } from "../PinnedRoot.ts"
import { expandHome, normalizePath } from "./spelling.ts"

/**
 * One way to name an allowed directory: `text` as `list_allowed_directories` shows it, and the
 * pinned root it leads to. `verify` is what each call re-checks: `true` when `text` is the path
 * the root was pinned at, else `text` too, so that a link in it re-pointed elsewhere is refused.
 *
 * @since 0.1.0
 * @category models
 */
export interface Spelling {
  readonly text: string
  readonly root: PinnedRoot
  readonly verify: true | string
}

/** @since 0.1.0 @category models */
export interface PinOptions {
  readonly strategy: Strategy
  readonly warn: (line: string) => void
}

/**
 * A set of allowed directories, pinned.
 *
 * @since 0.1.0
 * @category models
 */
export class AllowedDirectories {
  /** The directories as the reference lists them, in its order (taken once: every call reads it). */
  readonly texts: ReadonlyArray<string>

  constructor(readonly spellings: ReadonlyArray<Spelling>) {
    this.texts = spellings.map((s) => s.text)
  }

  /** Closes every pinned root; calls already running finish on their handles first. */
  close(): void {
    for (const root of new Set(this.spellings.map((s) => s.root))) root.close()
  }
}

/** Pins each real path once, however many spellings lead to it. */
class Pins {
  private readonly roots = new Map<string, Promise<PinnedRoot>>()
  constructor(private readonly strategy: Strategy) {}
  pin(real: string): Promise<PinnedRoot> {
    let p = this.roots.get(real)
    if (p === undefined) {
      p = PinnedRoot.open(real, { strategy: this.strategy })
      this.roots.set(real, p)
    }
    return p
  }
}

const spell = (text: string, real: string, root: PinnedRoot): Spelling => ({ text, root, verify: text === real ? true : text })

/**
 * The command line's directories, as the reference takes them: each argument `~`-expanded and made
 * absolute, listed as given and, when it differs, as its real path too; a spelling that is not an
 * accessible directory is skipped with a warning. Empty when nothing was usable.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromArguments = async (args: ReadonlyArray<string>, options: PinOptions): Promise<AllowedDirectories> => {
  const listed = (
    await Promise.all(
      args.map(async (arg) => {
        const original = normalizePath(path.resolve(expandHome(arg)))
        const resolved = await fs.realpath(path.resolve(expandHome(arg))).then(normalizePath, () => undefined)
        return resolved === undefined || resolved === original ? [resolved ?? original] : [original, resolved]
      })
    )
  ).flat()
  const pins = new Pins(options.strategy)
  const out: Array<Spelling> = []
  for (const text of listed) {
    const pinned = await pinDirectory(text, pins, options.warn)
    if (pinned !== undefined) out.push(spell(text, pinned.real, pinned.root))
  }
  return new AllowedDirectories(out)
}

const pinDirectory = async (
  text: string,
  pins: Pins,
  warn: (line: string) => void
): Promise<{ readonly real: string; readonly root: PinnedRoot } | undefined> => {
  let isDirectory: boolean
  try {
    isDirectory = (await fs.stat(text)).isDirectory()
  } catch {
    warn(`Warning: Cannot access directory ${text}, skipping`)
    return undefined
  }
  if (!isDirectory) {
    warn(`Warning: ${text} is not a directory, skipping`)
    return undefined
  }
  try {
    const real = await fs.realpath(text)
    return { real, root: await pins.pin(real) }
  } catch (e) {
    warn(`Warning: Cannot access directory ${text}, skipping (${e instanceof Error ? e.message : String(e)})`)
    return undefined
  }
}

/** A root the client declared: a `file://` URI or a plain path. @since 0.1.0 @category models */
export interface ClientRoot {
  readonly uri: string
  readonly name?: string | undefined
}

const realPathOfRoot = async (uri: string): Promise<string | undefined> => {
  try {
    const raw = uri.startsWith("file://") ? fileURLToPath(uri) : uri
    return normalizePath(await fs.realpath(path.resolve(expandHome(raw))))
  } catch {
    return undefined
  }
}

/**
 * The client's roots, as the reference takes them: each made a real path, kept if it is a
 * directory, listed once by that real path. Empty when none was usable.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromRoots = async (roots: ReadonlyArray<ClientRoot>, options: PinOptions): Promise<AllowedDirectories> => {
  const pins = new Pins(options.strategy)
  const out: Array<Spelling> = []
  for (const root of roots) {
    const real = await realPathOfRoot(root.uri)
    if (real === undefined) {
      options.warn(`Skipping invalid path or inaccessible: ${root.uri}`)
      continue
    }
    let isDirectory: boolean
    try {
      isDirectory = (await fs.stat(real)).isDirectory()
    } catch (e) {
      options.warn(`Skipping invalid directory: ${real} due to error: ${e instanceof Error ? e.message : String(e)}`)
      continue
    }
    if (!isDirectory) {
      options.warn(`Skipping non-directory root: ${real}`)
      continue
    }
    try {
      out.push(spell(real, real, await pins.pin(real)))
    } catch (e) {
      options.warn(`Skipping invalid directory: ${real} due to error: ${e instanceof Error ? e.message : String(e)}`)
    }
  }
  return new AllowedDirectories(out)
}
