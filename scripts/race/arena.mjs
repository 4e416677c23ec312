// The arena a race is fought in: a root the executor pins, and outside it a canary tree that no
// operation may ever read or change, plus a "planted" directory the attacker moves into the root.
//
//   base/root/d/sub/{g.txt, deep/inner.txt, empty/}   the contested directory D
//   base/root/file.txt                                the contested file
//   base/root/.d-link  -> base/outside/canary         symlink attack partner of d
//   base/root/.hl      == base/outside/canary/secret.txt (hard link) partner of file.txt
//   base/outside/canary/...                           checksummed; same shape as D, plus
//                                                     canary-only names and a random token
//   base/outside/planted/sub/{g.txt == canary/sub/h.txt, planted.txt, deep -> canary/sub/deep,
//                             empty -> canary/sub/empty}   dirswap partner of d (not checksummed:
//                                                     while it sits in the root it is fair game)
import { createHash, randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/** Owner given to the canary tree, so a chown that escapes is visible. */
const CANARY_UID = 4242
const CANARY_GID = 4243

/**
 * @typedef {{ base: string, root: string, outside: string, canary: string, planted: string,
 *   token: string, baseline: string, identities: Set<string>,
 *   restore: () => void, canaryChanged: () => boolean, resetCanary: () => void, dispose: () => void }} Arena
 */

/** @returns {Arena} */
export const makeArena = (parent = os.tmpdir()) => {
  const base = fs.mkdtempSync(path.join(parent, "pinnedfs-race-"))
  const root = path.join(base, "root")
  const outside = path.join(base, "outside")
  const canary = path.join(outside, "canary")
  const planted = path.join(outside, "planted")
  const token = `CANARY-${randomBytes(8).toString("hex")}`
  fs.mkdirSync(root)
  fs.mkdirSync(outside)

  const arena = {
    base, root, outside, canary, planted, token,
    baseline: "",
    identities: new Set(),
    restore: () => buildInside(arena),
    canaryChanged: () => checksum(canary) !== arena.baseline,
    resetCanary: () => {
      fs.rmSync(canary, { recursive: true, force: true })
      buildCanary(arena)
      // The hard links in root/.hl and planted/ point at the old inodes now: rebuild them too.
      arena.restore()
    },
    dispose: () => fs.rmSync(base, { recursive: true, force: true })
  }
  buildCanary(arena)
  buildInside(arena)
  return arena
}

const buildCanary = (arena) => {
  const { canary, token } = arena
  const file = (rel, body) => {
    fs.writeFileSync(path.join(canary, rel), `${token} ${body}\n`, { mode: 0o640 })
    fs.chmodSync(path.join(canary, rel), 0o640)
  }
  for (const dir of ["", "sub", "sub/deep", "sub/empty"]) {
    fs.mkdirSync(path.join(canary, dir), { recursive: true })
    fs.chmodSync(path.join(canary, dir), 0o750)
  }
  file("secret.txt", "secret")
  file("sub/g.txt", "g")
  // The planted directory's hard link points here, not at sub/g.txt: a canary file reached through
  // the symlink must have one link, or every checker that refuses hard links would refuse it anyway.
  file("sub/h.txt", "h")
  file("sub/canary-only.txt", "only")
  file("sub/deep/canary-deep.txt", "deep")
  const ids = new Set()
  const visit = (p) => {
    const st = fs.lstatSync(p, { bigint: true })
    fs.lchownSync(p, CANARY_UID, CANARY_GID)
    ids.add(`${st.dev}:${st.ino}`)
    if (st.isDirectory()) for (const n of fs.readdirSync(p)) visit(path.join(p, n))
  }
  visit(canary)
  arena.identities = ids
  arena.baseline = checksum(canary)
}

// What the inside of the arena must look like between tries: the tree spec repair() enforces.
const insideSpec = (arena) => ({
  [arena.root]: {
    d: {
      sub: {
        "g.txt": { file: "inside g\n" },
        deep: { "inner.txt": { file: "inside inner\n" } },
        empty: {}
      }
    },
    "file.txt": { file: "inside file\n" },
    ".d-link": { link: arena.canary },
    ".hl": { hard: path.join(arena.canary, "secret.txt") }
  },
  [arena.planted]: {
    sub: {
      "g.txt": { hard: path.join(arena.canary, "sub/h.txt") },
      "planted.txt": { file: "planted\n" },
      deep: { link: path.join(arena.canary, "sub/deep") },
      empty: { link: path.join(arena.canary, "sub/empty") }
    }
  }
})

const kindOf = (spec) => ("file" in spec ? "file" : "link" in spec ? "link" : "hard" in spec ? "hard" : "dir")

// Brings `dir` to `spec` touching only what differs, so a rebuild between tries costs a few lstat
// calls instead of a rewrite (file rewrites are slow on ext4: auto_da_alloc flushes them).
const repair = (dir, spec) => {
  fs.mkdirSync(dir, { recursive: true })
  for (const name of fs.readdirSync(dir)) {
    if (!(name in spec)) fs.rmSync(path.join(dir, name), { recursive: true, force: true })
  }
  for (const [name, want] of Object.entries(spec)) {
    const p = path.join(dir, name)
    const kind = kindOf(want)
    let st
    try {
      st = fs.lstatSync(p)
    } catch {
      st = undefined
    }
    const fits =
      st !== undefined &&
      (kind === "dir"
        ? st.isDirectory()
        : kind === "link"
          ? st.isSymbolicLink() && fs.readlinkSync(p) === want.link
          : kind === "hard"
            ? st.isFile() && st.ino === fs.lstatSync(want.hard).ino
            : st.isFile() && st.nlink === 1 && st.size < 4096)
    if (!fits) {
      if (st !== undefined) fs.rmSync(p, { recursive: true, force: true })
      if (kind === "dir") fs.mkdirSync(p)
      else if (kind === "link") fs.symlinkSync(want.link, p)
      else if (kind === "hard") fs.linkSync(want.hard, p)
      else fs.writeFileSync(p, want.file, { flag: "wx" })
    }
    if (kind === "dir") repair(p, want)
  }
}

const buildInside = (arena) => {
  for (const [dir, spec] of Object.entries(insideSpec(arena))) repair(dir, spec)
}

/**
 * Content, modes, owners and entries of a tree, links read (never followed); times and link
 * counts left out (a hard link to a canary file may legitimately be unlinked from the root).
 */
export const checksum = (dir) => {
  const h = createHash("sha256")
  const visit = (rel) => {
    const p = path.join(dir, rel)
    const st = fs.lstatSync(p)
    h.update(`${rel}\0${st.mode}\0${st.uid}\0${st.gid}\0${st.size}\0`)
    if (st.isSymbolicLink()) h.update(fs.readlinkSync(p))
    else if (st.isFile()) h.update(fs.readFileSync(p))
    else if (st.isDirectory()) for (const n of fs.readdirSync(p).sort()) visit(path.join(rel, n))
    h.update("\n")
  }
  visit(".")
  return h.digest("hex")
}

/** The attacks, each a set of name pairs the attacker exchanges, relative to the arena. */
export const attacks = {
  /** root/d flips with a symlink to the canary tree. */
  symlink: (a) => [[path.join(a.root, "d"), path.join(a.root, ".d-link")]],
  /** root/d flips with a directory moved in from outside, full of links into the canary. */
  dirswap: (a) => [[path.join(a.root, "d"), a.planted]],
  /** root/file.txt flips with a hard link to an outside file. */
  hardlink: (a) => [[path.join(a.root, "file.txt"), path.join(a.root, ".hl")]]
}

/**
 * Whether a successful answer carries anything of the canary: its token in content or text, a
 * canary-only name, or the identity of a canary inode.
 */
export const leaks = (arena, value) => {
  const seen = new Set()
  const scan = (v) => {
    if (v === null || v === undefined) return false
    if (typeof v === "string") return v.includes(arena.token) || v.includes("canary-")
    if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).includes(arena.token)
    if (typeof v !== "object" || seen.has(v)) return false
    seen.add(v)
    if ("ino" in v && "dev" in v) {
      // bigint (PinnedRoot), number (node:fs), or an Option of a number (Effect's File.Info).
      const plain = (x) => (x !== null && typeof x === "object" && "value" in x ? x.value : x)
      try {
        if (arena.identities.has(`${BigInt(plain(v.dev))}:${BigInt(plain(v.ino))}`)) return true
      } catch {
        // not an identity after all
      }
    }
    const values = Array.isArray(v) ? v : Object.values(v)
    return values.some(scan)
  }
  return scan(value)
}
