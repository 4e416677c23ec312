// The arena a race is fought in: a root the executor pins, and outside it a canary tree that no
// operation may ever read or change, plus a "planted" directory the attacker moves into the root.
//
//   base/root/d/sub/deep/{inner.txt, nest/n.txt, vacant/}   the contested directory D
//   base/root/file.txt                                    the contested file
//   base/root/.d-link  -> base/outside/canary             symlink attack partner of d
//   base/root/.hl      == base/outside/canary/secret.txt  (hard link) partner of file.txt
//   base/outside/canary/...                               checksummed; the same shape as D, the
//                                                         same names, token content, plus
//                                                         sub/deep/canary-deep.txt
//   base/outside/planted/sub/deep -> canary/sub/deep      dirswap partner of d (not checksummed:
//                                                         while it sits in the root it is fair game)
//
// Every contested path lies under d/sub/deep/ (or is file.txt), and under either directory attack
// that path names the canary's twin: through the link d, or through the planted link deep. So an
// executor fooled by the attack at the moment it uses the path reads, lists, writes, creates,
// removes or renames in the canary, and the canary shows it.
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
 *   restore: () => void, truth: () => Truth, canaryChanged: () => boolean, resetCanary: () => void,
 *   dispose: () => void }} Arena
 * @typedef {{ identities: Record<string, string> }} Truth
 *   identities: "dev:ino" of the contested inside entries, by root-relative path, read with the
 *   attacker parked (the right answer for a stat).
 */

/** The inside contents, which a read must answer exactly. */
export const inside = {
  "d/sub/deep/inner.txt": "inside inner\n",
  "d/sub/deep/nest/n.txt": "inside n\n",
  "file.txt": "inside file\n"
}

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
    base,
    root,
    outside,
    canary,
    planted,
    token,
    baseline: "",
    identities: new Set(),
    restore: () => buildInside(arena),
    truth: () => ({
      identities: Object.fromEntries(
        ["d/sub/deep/inner.txt", "file.txt"].map((rel) => {
          const st = fs.lstatSync(path.join(root, rel), { bigint: true })
          return [rel, `${st.dev}:${st.ino}`]
        })
      )
    }),
    canaryChanged: () => checksum(canary) !== arena.baseline,
    resetCanary: () => {
      fs.rmSync(canary, { recursive: true, force: true })
      buildCanary(arena)
      // root/.hl points at the old inode now: rebuild it too.
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
  for (const dir of ["", "sub", "sub/deep", "sub/deep/nest", "sub/deep/vacant"]) {
    fs.mkdirSync(path.join(canary, dir), { recursive: true })
    fs.chmodSync(path.join(canary, dir), 0o750)
  }
  file("secret.txt", "secret")
  // Each reached through a link has one link of its own, or every checker that refuses hard
  // links would refuse it anyway and the attack would prove nothing.
  file("sub/deep/inner.txt", "inner")
  file("sub/deep/nest/n.txt", "n")
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
        deep: {
          "inner.txt": { file: inside["d/sub/deep/inner.txt"] },
          nest: { "n.txt": { file: inside["d/sub/deep/nest/n.txt"] } },
          vacant: {}
        }
      }
    },
    "file.txt": { file: inside["file.txt"] },
    ".d-link": { link: arena.canary },
    ".hl": { hard: path.join(arena.canary, "secret.txt") }
  },
  [arena.planted]: {
    sub: {
      "planted.txt": { file: "planted\n" },
      deep: { link: path.join(arena.canary, "sub/deep") }
    }
  }
})

const kindOf = (spec) => ("file" in spec ? "file" : "link" in spec ? "link" : "hard" in spec ? "hard" : "dir")

// Brings `dir` to `spec` touching only what differs, so a rebuild between tries costs a few lstat
// calls instead of a rewrite (file rewrites are slow on ext4: auto_da_alloc flushes them). A file
// is rewritten when its content or mode is not the spec's, so a write, append or chmod that landed
// inside does not carry into the next try.
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
            : st.isFile() &&
              st.nlink === 1 &&
              (st.mode & 0o7777) === 0o644 &&
              st.size === Buffer.byteLength(want.file) &&
              fs.readFileSync(p, "utf8") === want.file)
    if (!fits) {
      if (st !== undefined) fs.rmSync(p, { recursive: true, force: true })
      if (kind === "dir") fs.mkdirSync(p)
      else if (kind === "link") fs.symlinkSync(want.link, p)
      else if (kind === "hard") fs.linkSync(want.hard, p)
      else {
        fs.writeFileSync(p, want.file, { flag: "wx" })
        fs.chmodSync(p, 0o644)
      }
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
  /** root/d flips with a directory moved in from outside, whose sub/deep is a link into the canary. */
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
