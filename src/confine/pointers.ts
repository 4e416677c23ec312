/**
 * Git pointer files. A `.git` that is a file is not the repository: it names it. `gitdir: <path>`
 * (relative to the file's directory, or absolute) is what git opens, as in the bare layout
 * (`gitdir: ./.bare`), a separate git directory (`git init --separate-git-dir`), a worktree
 * (`gitdir: <main>/.git/worktrees/<name>`, whose `commondir` names the main repository's git
 * directory, where its config and hooks are) and a submodule (`gitdir: ../.git/modules/<name>`).
 * Protecting only the pointer would leave the repository it names writable: a child writing its
 * config (`core.hooksPath`) or a hook runs code the next time the user runs git, outside any
 * sandbox. So the directory a pointer names, and a worktree's common directory, are protected like
 * the `.git` that named them, wherever they lie beneath a writable root.
 *
 * Read through the pinned walk (no link followed, a bounded size), and refused, with the reason,
 * when a pointer cannot be read, is not a pointer, names nothing, or reaches its repository through
 * a symbolic link inside a writable root (a child could turn that link elsewhere).
 *
 * @internal
 */
import * as path from "node:path"
import { type Anchors, canonicalDirectory } from "./anchors.ts"
import type { Candidate } from "./discovery.ts"
import { ConfinementError } from "./errors.ts"
import { type RawPath, rawOf, relativeTo, shown, textOf, within } from "./raw.ts"

/** Longest pointer file read: a path (PATH_MAX is 4096) and its prefix. */
const maxPointer = 8192

const refuse = (message: string, cause?: unknown) => new ConfinementError("pointer", message, cause === undefined ? undefined : { cause })

/** The text of `file` (beneath `anchor`), read through the anchor's pin; null when it does not exist. */
const readSmall = async (anchors: Anchors, anchor: RawPath, file: RawPath, what: string): Promise<string | null> => {
  const rel = textOf(relativeTo(file, anchor))
  if (rel === undefined) throw refuse(`${what} '${shown(file)}' is not named in UTF-8: it cannot be read to follow it`)
  const root = await anchors.pin(anchor)
  try {
    return (await root.readFile(rel, { limit: maxPointer })).toString("utf8")
  } catch (e) {
    const code = (e as { code?: string }).code
    if (code === "ENOENT") return null
    const reason = (e as { refusal?: string }).refusal === "toolarge" ? `it is longer than ${maxPointer} bytes` : (e as Error).message
    throw refuse(`${what} '${shown(file)}' cannot be read: ${reason}`, e)
  }
}

/**
 * Where `target` (as a pointer in `from`'s directory writes it) leads, canonical; refused when it
 * does not exist or is reached through a link somewhere a child could change it.
 */
const resolveTarget = async (from: RawPath, target: string, writable: (p: RawPath) => boolean, what: string): Promise<RawPath> => {
  const dir = textOf(path.dirname(from))
  if (dir === undefined) throw refuse(`${what} '${shown(from)}' is in a directory not named in UTF-8: its target cannot be resolved`)
  const lexical = path.resolve(dir, target)
  const canonical = await canonicalDirectory(lexical).catch((e: unknown) => {
    throw refuse(`${what} '${shown(from)}' points to '${lexical}', which is not a directory`, e)
  })
  if (canonical === null) throw refuse(`${what} '${shown(from)}' points to '${lexical}', which does not exist`)
  const spelled = rawOf(lexical)
  if (canonical !== spelled && (writable(canonical) || writable(spelled))) {
    throw refuse(
      `${what} '${shown(from)}' reaches its repository through a symbolic link ('${lexical}' is '${shown(canonical)}'): ` +
        "a confined child could turn that link elsewhere; write the repository's real path in the pointer"
    )
  }
  return canonical
}

/**
 * The text git takes from a pointer or `commondir` file: all of it but every trailing CR and LF.
 * Read otherwise, a pointer ending in a CR would name a decoy directory whose name ends in one,
 * while git opens the real repository beside it. A newline inside the path is part of it, and
 * git's C string ends at the first NUL.
 */
const trimmed = (text: string): string => text.replace(/[\r\n]+$/, "").split("\0")[0]!

/** The path a `gitdir: ` pointer file holds. */
const gitdirOf = (text: string, file: RawPath): string => {
  const line = trimmed(text)
  if (!line.startsWith("gitdir: ") || line.length === "gitdir: ".length) {
    throw refuse(`the .git file '${shown(file)}' is not a git pointer ('gitdir: <path>')`)
  }
  return line.slice("gitdir: ".length)
}

export interface PointerInput {
  readonly candidates: ReadonlyArray<Candidate>
  readonly anchors: Anchors
  /** Whether a child could write at this path (beneath a writable root; everywhere in full access). */
  readonly writable: (p: RawPath) => boolean
  /** The anchor a protected directory at this path is held from. */
  readonly anchorOf: (p: RawPath) => RawPath
}

/**
 * The directories the `.git` files among `candidates` name (and worktrees' common directories),
 * as candidates protected like the pointer, for those a child could write.
 */
export const followPointers = async (input: PointerInput): Promise<Array<Candidate>> => {
  const files = input.candidates.filter((c) => c.type === "file" && path.basename(c.path) === ".git")
  const out: Array<Candidate> = []
  const seen = new Set<RawPath>(input.candidates.map((c) => c.path))
  const add = (c: Candidate, dir: RawPath) => {
    if (!input.writable(dir) || seen.has(dir)) return
    seen.add(dir)
    out.push({ path: dir, anchor: input.anchorOf(dir), access: c.access, rule: c.rule, origin: "pointer", type: "directory" })
  }
  await Promise.all(
    files.map(async (c) => {
      const text = await readSmall(input.anchors, c.anchor, c.path, "the .git file")
      if (text === null) return // vanished since discovery: the final validation decides
      const gitdir = await resolveTarget(c.path, gitdirOf(text, c.path), input.writable, "the .git file")
      add(c, gitdir)
      // A worktree's git directory names the repository whose config and hooks it uses.
      const commonFile = `${gitdir}/commondir`
      const anchor = within(gitdir, c.anchor) ? c.anchor : gitdir
      const common = await readSmall(input.anchors, anchor, commonFile, "the worktree's commondir file")
      if (common === null) return
      const line = trimmed(common)
      if (line === "") throw refuse(`the worktree's commondir file '${shown(commonFile)}' names no path`)
      add(c, await resolveTarget(commonFile, line, input.writable, "the worktree's commondir file"))
    })
  )
  return out
}
