// STAND-IN, not the package's fallback: a careful path-based executor, "lstat every component, then
// use the path". It refuses a link or a hard-linked file it sees, exactly like pinnedfs, but checks
// one name and then uses another lookup of it, so a swap between the two carries it out of the
// root. It exists to show what the race harness measures until PathAtomicFileSystem (branch
// `fallback`) is on main; the stress report labels its figures as this stand-in.
import * as fsp from "node:fs/promises"
import * as path from "node:path"

class Refused extends Error {
  constructor(what, rel) {
    super(`${what}: ${rel}`)
    this.refusal = what
  }
}

/** @param {string} root */
export const openNaive = (root) => {
  const abs = (rel) => path.join(root, rel)
  // Every component before the leaf must be a real directory; the leaf must not be a link (unless
  // the operation acts on links) nor a hard-linked file.
  const check = async (rel, { leafLink = false, leafMayBeMissing = false } = {}) => {
    const parts = rel.split("/").filter((p) => p !== "" && p !== ".")
    if (parts.includes("..")) throw new Refused("escape", rel)
    for (let i = 1; i < parts.length; i++) {
      const st = await fsp.lstat(abs(parts.slice(0, i).join("/")))
      if (st.isSymbolicLink()) throw new Refused("symlink", rel)
    }
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
    exists: async (rel) => {
      try {
        await check(rel, { leafLink: true })
        return true
      } catch (e) {
        if (e.code === "ENOENT") return false
        throw e
      }
    },
    stat: async (rel) => {
      await check(rel)
      return fsp.lstat(abs(rel), { bigint: true })
    },
    readFile: async (rel) => {
      await check(rel)
      return fsp.readFile(abs(rel))
    },
    writeFile: async (rel, data, options) => {
      await check(rel, { leafMayBeMissing: true })
      return fsp.writeFile(abs(rel), data, { flag: options?.flag ?? "w" })
    },
    chmod: async (rel, mode) => {
      await check(rel)
      return fsp.chmod(abs(rel), mode)
    },
    chown: async (rel, uid, gid) => {
      await check(rel)
      return fsp.chown(abs(rel), uid, gid)
    },
    readDirectory: async (rel, options) => {
      await check(rel)
      return listing(rel, options?.recursive === true)
    },
    glob: async (pattern, options) => {
      // Enough of a glob for the harness: "**" under a root lists it recursively.
      const rel = options?.root ?? ""
      await check(rel)
      if (pattern !== "**") throw new Error(`naive glob supports only "**", got ${pattern}`)
      return (await listing(rel, true)).map((n) => (rel ? `${rel}/${n}` : n))
    },
    makeDirectory: async (rel, options) => {
      await check(path.dirname(rel))
      await fsp.mkdir(abs(rel), { recursive: options?.recursive === true })
    },
    mkdirs: async (plan) => {
      const created = []
      for (const d of plan) {
        await check(path.dirname(d.path))
        await fsp.mkdir(abs(d.path), { mode: d.mode ?? 0o777 })
        created.push({ path: d.path, identity: identity(await fsp.lstat(abs(d.path), { bigint: true })) })
      }
      return { created, error: null }
    },
    remove: async (rel, options) => {
      await check(rel, { leafLink: true })
      await fsp.rm(abs(rel), { recursive: options?.recursive === true, force: options?.force === true })
    },
    rename: async (from, to) => {
      await check(from, { leafLink: true })
      await check(path.dirname(to))
      await fsp.rename(abs(from), abs(to))
    },
    rmdirs: async (owned) => {
      const members = []
      for (const d of owned) {
        const st = await check(d.path)
        if (identity(await fsp.lstat(abs(d.path), { bigint: true })) !== d.identity || !st.isDirectory()) {
          members.push({ path: d.path, status: "refused", error: new Refused("identity", d.path) })
          continue
        }
        await fsp.rmdir(abs(d.path))
        members.push({ path: d.path, status: "removed", error: null })
      }
      return { members, stopped: false }
    },
    batch: async (requests) =>
      Promise.all(
        requests.map(async (r) => {
          try {
            const value =
              r.operation === "readDirectory"
                ? await target.readDirectory(r.path, r)
                : await target[r.operation](r.path)
            return { ok: true, value }
          } catch (error) {
            return { ok: false, error }
          }
        })
      )
  }
  return target
}
