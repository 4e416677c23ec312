/**
 * Mounts inside the trees a launch walks. A tmpfs or a volume mounted in the workspace is part of
 * it: writable in the sandbox like the rest (bubblewrap binds the workspace with its submounts),
 * so discovery walks it as an anchor of its own (the walk never crosses a mount by itself) and
 * what the policy protects in it is protected. One thing cannot be confined that way: a bind mount
 * showing, under another name, part of a file system the launch protects or writes (the
 * workspace's own `.git` mounted at `ws/alias`, the workspace mounted inside itself): a protected
 * path would be reachable through a name no rule matches. The mount table says what each mount
 * shows (its device and the path of its root in that file system); a launch that meets such a
 * mount is refused, naming it and what to do.
 *
 * @internal
 */
import * as fs from "node:fs"
import { ConfinementError } from "./errors.ts"
import { type RawPath, rawOfBytes, shown, within } from "./raw.ts"

interface MountEntry {
  readonly device: string
  /** The path, in its file system, of the directory mounted. */
  readonly root: RawPath
  readonly point: RawPath
}

/** `\ooo` escapes (space, tab, newline, backslash) undone, byte for byte. */
const unescapeField = (field: RawPath): RawPath =>
  field.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(Number.parseInt(o, 8)))

/** This process's mount table, in order (a later entry at one mount point is on top). */
export const readMounts = async (): Promise<Array<MountEntry>> => {
  const text = rawOfBytes(await fs.promises.readFile("/proc/self/mountinfo"))
  const out: Array<MountEntry> = []
  for (const line of text.split("\n")) {
    const f = line.split(" ")
    if (f.length < 5) continue
    out.push({ device: f[2]!, root: unescapeField(f[3]!), point: unescapeField(f[4]!) })
  }
  return out
}

/** The mount a path lies on (the deepest mount point above it, the top one there). */
const mountOf = (table: ReadonlyArray<MountEntry>, p: RawPath): MountEntry | undefined => {
  let best: MountEntry | undefined
  for (const m of table) if (within(p, m.point) && (best === undefined || m.point.length >= best.point.length)) best = m
  return best
}

/** Where `p` is in its file system: its mount's root plus the rest of the path. */
const inFileSystem = (m: MountEntry, p: RawPath): RawPath => {
  const rest = m.point === "/" ? p : p.slice(m.point.length)
  if (rest === "" || rest === "/") return m.root
  return m.root === "/" ? rest : `${m.root}${rest}`
}

/**
 * Refuses the launch when one of `mounts` (met by discovery inside its trees) shows a protected
 * path or a writable root under another name; answers quietly otherwise.
 */
export const checkMountAliases = async (
  mounts: ReadonlyArray<RawPath>,
  protectedPaths: ReadonlyArray<RawPath>,
  writableRoots: ReadonlyArray<RawPath>
): Promise<void> => {
  if (mounts.length === 0) return
  const table = await readMounts().catch(() => null)
  if (table === null) {
    throw new ConfinementError("mount", `'${shown(mounts[0]!)}' is a mount point, and the mount table cannot be read to tell what it shows`)
  }
  for (const point of mounts) {
    const m = mountOf(table, point)
    if (m === undefined || m.point !== point) continue
    const overlaps = (p: RawPath) => {
      const on = mountOf(table, p)
      if (on === undefined || on.device !== m.device || on === m) return false
      const there = inFileSystem(on, p)
      return within(there, m.root) || within(m.root, there)
    }
    const hit = protectedPaths.find(overlaps)
    if (hit !== undefined) {
      throw new ConfinementError(
        "mount",
        `the mount '${shown(point)}' shows the protected path '${shown(hit)}' (or what is inside it, or what contains it) under another name: ` +
          "a confined child could reach it there. Mount it outside the workspace, or unmount it for the launch"
      )
    }
    const root = writableRoots.find((w) => !within(w, point) && overlaps(w))
    if (root !== undefined) {
      throw new ConfinementError(
        "mount",
        `the mount '${shown(point)}' shows part of the writable root '${shown(root)}' again under another name, where the protected paths in it would not be: ` +
          "mount it outside the workspace, or unmount it for the launch"
      )
    }
  }
}
