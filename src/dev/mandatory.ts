/**
 * The mandatory deny set: paths no fixer may write, whatever the policy says, because another
 * program later runs or obeys what is in them (a shell, git, an editor, a package manager). Writing
 * one is running code outside the pipeline, at a moment nobody approved.
 *
 * It is matched by path segments, never by a regular expression: a path is split on `/` and each
 * segment compared, after folding (Unicode compatibility normalization, then lower case: a
 * case-insensitive volume would otherwise let `.VSCode` or `.vſcode` through). A name containing a
 * newline, a carriage return, U+2028 or U+2029 is one segment like any other; no character can make
 * a segment comparison skip it.
 *
 * Besides the fixed entries, a workspace can point git at other directories: a `.git` file
 * (`gitdir: …`) or link names the directory git obeys, and a repository's `core.hooksPath` and
 * `include.path` name its hooks and more configuration. {@link mandatorySetOf} reads those through
 * the pinned root, and every target inside the workspace is denied as a whole tree.
 *
 * @since 0.1.0
 */
import * as posix from "node:path/posix"
import type { PinnedRoot } from "../PinnedRoot.ts"

/**
 * One entry: the segments it names and why it is never written. `tree` entries cover the path and
 * everything beneath it, at any depth; `name` entries cover a path whose last segments are these.
 *
 * @since 0.1.0
 * @category models
 */
export interface MandatoryEntry {
  readonly segments: ReadonlyArray<string>
  readonly covers: "tree" | "name"
  readonly why: string
}

const shellStartup = "a shell runs it at start-up"

/**
 * The fixed entries. `docs/dev.md` gives the same list with the reasons.
 *
 * @since 0.1.0
 * @category constants
 */
export const mandatoryEntries: ReadonlyArray<MandatoryEntry> = [
  {
    segments: [".git"],
    covers: "tree",
    why: "git obeys it: config (core.hooksPath, core.fsmonitor, aliases), hooks, and a .git file's gitdir pointer"
  },
  { segments: [".hg"], covers: "tree", why: "Mercurial runs the hooks its hgrc names" },
  { segments: [".husky"], covers: "tree", why: "husky's directory is git's hooks path: git runs what is in it" },
  { segments: [".vscode"], covers: "tree", why: "the editor runs its tasks (some at folder open) and obeys its settings" },
  { segments: [".idea"], covers: "tree", why: "JetBrains IDEs run its run configurations and start-up tasks" },
  { segments: [".devcontainer"], covers: "tree", why: "its initializeCommand runs on the host when the folder is opened in a container" },
  { segments: [".config", "git"], covers: "tree", why: "git's own configuration and hooks (XDG location)" },
  { segments: [".config", "fish"], covers: "tree", why: "fish runs config.fish, conf.d and functions at start-up" },
  { segments: [".gitconfig"], covers: "name", why: "git obeys it (aliases, hooks path, fsmonitor, ssh command)" },
  {
    segments: [".gitmodules"],
    covers: "name",
    why: "git obeys it: a changed url makes the next submodule update fetch and check out other code"
  },
  { segments: [".envrc"], covers: "name", why: "direnv runs it when a shell enters the directory" },
  { segments: [".npmrc"], covers: "name", why: "npm obeys it: script-shell, git and node-options name programs npm runs" },
  { segments: [".yarnrc"], covers: "name", why: "yarn obeys it, including the yarn-path it runs" },
  { segments: [".yarnrc.yml"], covers: "name", why: "yarn runs the file its yarnPath names, and its plugins" },
  { segments: [".pnpmfile.cjs"], covers: "name", why: "pnpm runs its hooks at install" },
  {
    segments: ["pinnedfs.config.js"],
    covers: "name",
    why: "pinnedfs fix imports it and runs the commands it names, unconfined unless it says otherwise"
  },
  {
    segments: ["pinnedfs.config.json"],
    covers: "name",
    why: "pinnedfs fix runs the commands it names, and obeys its confine setting"
  },
  { segments: ["config.fish"], covers: "name", why: shellStartup },
  ...[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".zlogout",
    ".cshrc",
    ".tcshrc",
    ".login",
    ".logout",
    ".kshrc",
    ".mkshrc",
    ".xprofile",
    ".xinitrc",
    ".xsession",
    ".xsessionrc"
  ].map((name): MandatoryEntry => ({ segments: [name], covers: "name", why: shellStartup }))
]

/**
 * A segment as compared: compatibility-normalized and lower-cased, so that every spelling a
 * case-insensitive or normalization-insensitive volume treats as the same name compares equal.
 *
 * @since 0.1.0
 * @category matching
 */
export const fold = (segment: string): string => segment.normalize("NFKC").toLowerCase()

/**
 * A directory this workspace points git at, denied as a whole tree.
 *
 * @since 0.1.0
 * @category models
 */
export interface PointerTarget {
  /** Canonical workspace path of the directory. */
  readonly path: string
  /** Where the pointer was found and what it is. */
  readonly why: string
}

/**
 * The mandatory set of one workspace: the fixed entries and its git pointer targets.
 *
 * @since 0.1.0
 * @category models
 */
export interface MandatorySet {
  readonly pointers: ReadonlyArray<PointerTarget>
  /** Why `path` (canonical) may never be written, or `undefined` when it may be. */
  readonly denies: (path: string) => string | undefined
}

const folded = mandatoryEntries.map((e) => ({ ...e, segments: e.segments.map(fold) }))

const entryAt = (parts: ReadonlyArray<string>, at: number, segments: ReadonlyArray<string>): boolean => {
  if (at + segments.length > parts.length) return false
  for (let k = 0; k < segments.length; k++) if (parts[at + k] !== segments[k]) return false
  return true
}

const fixedDenial = (parts: ReadonlyArray<string>): string | undefined => {
  for (const e of folded) {
    if (e.covers === "name") {
      if (entryAt(parts, parts.length - e.segments.length, e.segments)) return `'${e.segments.join("/")}': ${e.why}`
      continue
    }
    for (let at = 0; at < parts.length; at++) if (entryAt(parts, at, e.segments)) return `'${e.segments.join("/")}': ${e.why}`
  }
  return undefined
}

/**
 * A set with these pointer targets.
 *
 * @since 0.1.0
 * @category constructors
 */
export const mandatorySet = (pointers: ReadonlyArray<PointerTarget>): MandatorySet => {
  const targets = pointers.map((p) => ({ parts: p.path.split("/").map(fold), why: p.why }))
  return {
    pointers,
    denies: (path) => {
      const parts = path.split("/").map(fold)
      const fixed = fixedDenial(parts)
      if (fixed !== undefined) return fixed
      for (const t of targets) if (entryAt(parts, 0, t.parts)) return `a directory git is pointed at (${t.why})`
      return undefined
    }
  }
}

/**
 * The fixed entries alone: what applies where no workspace was read.
 *
 * @since 0.1.0
 * @category constants
 */
export const fixedMandatorySet: MandatorySet = mandatorySet([])

/** A pointer's text as a canonical workspace path, when it names something inside the workspace. */
const inside = (root: PinnedRoot, from: string, target: string): string | undefined => {
  const t = target.trim()
  if (t === "" || t.includes("\0")) return undefined
  let rel: string
  if (t.startsWith("/")) {
    const base = root.path.endsWith("/") ? root.path : `${root.path}/`
    if (!t.startsWith(base)) return undefined
    rel = t.slice(base.length)
  } else {
    rel = posix.join(from, t)
  }
  const normal = posix.normalize(rel).replace(/\/+$/, "")
  if (normal === "" || normal === "." || normal === ".." || normal.startsWith("../") || normal.startsWith("/")) return undefined
  return normal
}

/** The `path =` values of `[core] hooksPath` and of `[include]`/`[includeIf …]` in a git config. */
const configPointers = (text: string): Array<{ key: string; value: string }> => {
  const out: Array<{ key: string; value: string }> = []
  let section = ""
  for (const raw of text.split("\n")) {
    const line = raw.trim()
    const header = /^\[\s*([A-Za-z0-9.-]+)/.exec(line)
    if (header) {
      section = header[1]!.toLowerCase()
      continue
    }
    const kv = /^([A-Za-z0-9-]+)\s*=\s*(.*)$/.exec(line)
    if (!kv) continue
    const key = kv[1]!.toLowerCase()
    const value = kv[2]!.replace(/^"(.*)"$/, "$1")
    if (section === "core" && key === "hookspath") out.push({ key: "core.hooksPath", value })
    if ((section === "include" || section === "includeif") && key === "path") out.push({ key: `${section}.path`, value })
  }
  return out
}

const dirOf = (path: string): string => {
  const at = path.lastIndexOf("/")
  return at < 0 ? "" : path.slice(0, at)
}

/** Reads what the pinned root holds at `path` as text, or `undefined` (absent, a link, too large…). */
const text = async (root: PinnedRoot, path: string): Promise<string | undefined> => {
  try {
    return (await root.readFile(path, { limit: 1024 * 1024 })).toString("utf8")
  } catch {
    return undefined
  }
}

/**
 * The workspace's mandatory set: the fixed entries and every directory inside the workspace that a
 * `.git` file or link, or a repository's `core.hooksPath` or `include.path`, points git at. Read
 * through the pinned root (one native glob for `**\/.git`, which enters no link and no `.git`
 * directory, then small reads).
 *
 * @since 0.1.0
 * @category constructors
 */
export const mandatorySetOf = async (root: PinnedRoot): Promise<MandatorySet> => {
  const pointers: Array<PointerTarget> = []
  const add = (from: string, target: string, why: string) => {
    const p = inside(root, from, target)
    if (p !== undefined) pointers.push({ path: p, why })
  }
  const readConfig = async (gitDir: string, worktree: string) => {
    const config = await text(root, gitDir === "" ? "config" : `${gitDir}/config`)
    if (config === undefined) return
    for (const { key, value } of configPointers(config)) {
      // A relative hooks path is taken from the top of the working tree; an include from the file.
      add(key === "core.hooksPath" ? worktree : gitDir, value, `${key} in ${gitDir}/config`)
    }
  }
  // What is inside a .git directory is denied as a whole already: its objects are not walked.
  const found = await root.glob("**/.git", { dot: true, exclude: ["**/.git/*"] })
  const infos =
    found.length === 0
      ? []
      : await root.batch(
          found.map((path) => ({ operation: "stat" as const, path })),
          { size: found.length }
        )
  for (const [i, path] of found.entries()) {
    const info = infos[i]!
    if (!info.ok) continue
    const worktree = dirOf(path)
    const type = (info.value as { type: string }).type
    if (type === "Directory") {
      await readConfig(path, worktree)
    } else if (type === "File") {
      const pointer = /^gitdir:\s*(.+)$/m.exec((await text(root, path)) ?? "")
      if (pointer) {
        add(worktree, pointer[1]!, `the gitdir of ${path}`)
        const target = inside(root, worktree, pointer[1]!)
        if (target !== undefined) await readConfig(target, worktree)
      }
    } else if (type === "SymbolicLink") {
      const target = await root.readLink(path).catch(() => undefined)
      if (target !== undefined) {
        add(worktree, target, `the target of the link ${path}`)
        const t = inside(root, worktree, target)
        if (t !== undefined) await readConfig(t, worktree)
      }
    }
  }
  return mandatorySet(pointers)
}
