// The race tests' control: a careful path-based executor, "lstat every component, then use the
// path". It refuses a link or a hard-linked file it sees, exactly like pinnedfs, but checks one
// lookup of a name and then acts on another, so a swap between the two carries it out of the root.
// Every cell of test/race runs it beside pinnedfs, under the same attacker and the same detectors,
// and requires it to escape: that is what shows the cell can see an escape at all.
//
// `window`, when given, is awaited between the check and the use of every operation, which is how
// the harness makes the swap land inside that window on demand instead of waiting for the race to
// find it (the forced exposure of test/race). Without it the executor runs at full speed.
import * as fsp from "node:fs/promises"
import * as path from "node:path"

class Refused extends Error {
  constructor(what, rel) {
    super(`${what}: ${rel}`)
    this.refusal = what
  }
}

/**
 * @param {string} root
 * @param {{ window?: () => Promise<void> }} [options]
 */
export const openNaive = (root, { window } = {}) => {
  const abs = (rel) => path.join(root, rel)
  const gap = async () => {
    if (window) await window()
  }
  // Every component before the leaf must be a real directory; the leaf (unless `ancestorsOnly`)
  // must not be a link (unless the operation acts on links) nor a hard-linked file.
  const check = async (rel, { leafLink = false, leafMayBeMissing = false, ancestorsOnly = false } = {}) => {
    const parts = rel.split("/").filter((p) => p !== "" && p !== ".")
    if (parts.includes("..")) throw new Refused("escape", rel)
    for (let i = 1; i < parts.length; i++) {
      const st = await fsp.lstat(abs(parts.slice(0, i).join("/")))
      if (st.isSymbolicLink()) throw new Refused("symlink", rel)
    }
    if (ancestorsOnly) return undefined
    let st
    try {
      st = await fsp.lstat(abs(rel))
    } catch (e) {
      if (leafMayBeMissing && e.code === "ENOENT") return undefined
      throw e
    }
    if (st.isSymbolicLink() && !leafLink) throw new Refused("symlink", rel)
    if (st.isFile() && st.nlink > 1) throw new Refused("hardlink", rel)
    return st
  }
  /** Check, open the window, use. */
  const guarded = async (rel, checkOptions, use) => {
    const st = await check(rel, checkOptions)
    await gap()
    return use(st)
  }
  const identity = (st) => `${st.dev}:${st.ino}`
  const listing = async (rel, recursive) => {
    const out = []
    const visit = async (dir, prefix) => {
      for (const name of await fsp.readdir(abs(dir))) {
        const child = dir === "" ? name : `${dir}/${name}`
        out.push(prefix + name)
        if (recursive && (await fsp.lstat(abs(child))).isDirectory()) await visit(child, `${prefix}${name}/`)
      }
    }
    await visit(rel, "")
    return out
  }
  const target = {
    exists: (rel) =>
      // The ancestors are checked; the leaf's own lstat is the use.
      guarded(rel, { ancestorsOnly: true }, () =>
        fsp.lstat(abs(rel)).then(
          () => true,
          (e) => {
            if (e.code === "ENOENT") return false
            throw e
          }
        )
      ),
    stat: (rel) => guarded(rel, {}, () => fsp.lstat(abs(rel), { bigint: true })),
    readFile: (rel) => guarded(rel, {}, () => fsp.readFile(abs(rel))),
    writeFile: (rel, data, options) =>
      guarded(rel, { leafMayBeMissing: true }, () => fsp.writeFile(abs(rel), data, { flag: options?.flag ?? "w" })),
    chmod: (rel, mode) => guarded(rel, {}, () => fsp.chmod(abs(rel), mode)),
    chown: (rel, uid, gid) => guarded(rel, {}, () => fsp.chown(abs(rel), uid, gid)),
    readDirectory: (rel, options) => guarded(rel, {}, () => listing(rel, options?.recursive === true)),
    glob: async (pattern, options) => {
      // Enough of a glob for the harness: "**" under a root lists it recursively.
      const rel = options?.root ?? ""
      if (pattern !== "**") throw new Error(`naive glob supports only "**", got ${pattern}`)
      return guarded(rel, {}, () => listing(rel, true))
    },
    makeDirectory: (rel, options) =>
      // With recursive the parent may be one of the directories to make.
      guarded(path.dirname(rel), { leafMayBeMissing: options?.recursive === true }, () =>
        fsp.mkdir(abs(rel), { recursive: options?.recursive === true }).then(() => undefined)
      ),
    mkdirs: async (plan) => {
      const created = []
      for (const d of plan) {
        await guarded(path.dirname(d.path), {}, () => fsp.mkdir(abs(d.path), { mode: d.mode ?? 0o777 }))
        created.push({ path: d.path, identity: identity(await fsp.lstat(abs(d.path), { bigint: true })) })
      }
      return { created, error: null }
    },
    remove: (rel, options) =>
      guarded(rel, { leafLink: true }, () => fsp.rm(abs(rel), { recursive: options?.recursive === true, force: options?.force === true })),
    rename: async (from, to) => {
      await check(path.dirname(to))
      return guarded(from, { leafLink: true }, () => fsp.rename(abs(from), abs(to)))
    },
    rmdirs: async (owned) => {
      const members = []
      for (const d of owned) {
        const st = await check(d.path)
        if (identity(await fsp.lstat(abs(d.path), { bigint: true })) !== d.identity || !st.isDirectory()) {
          members.push({ path: d.path, status: "refused", error: new Refused("identity", d.path) })
          continue
        }
        await gap()
        await fsp.rmdir(abs(d.path))
        members.push({ path: d.path, status: "removed", error: null })
      }
      return { members, stopped: false }
    },
    batch: async (requests) =>
      Promise.all(
        requests.map(async (r) => {
          try {
            const value = r.operation === "readDirectory" ? await target.readDirectory(r.path, r) : await target[r.operation](r.path)
            return { ok: true, value }
          } catch (error) {
            return { ok: false, error }
          }
        })
      )
  }
  return target
}
