// The operations run through the contested path, each against the attacks it is exposed to, with
// what each may answer.
//
// A target is anything with PinnedRoot's method names (PinnedRoot itself, the path-based fallback,
// the naive control). Paths: everything under d/sub/deep/ is contested by the symlink and dirswap
// attacks (under either, the path names the canary's twin), file.txt by the hardlink attack.
//
// Each operation says which answers are right, so a cell checks more than "no canary seen":
//   right(value, truth, attack)  null when a successful answer is the inside one, else what is wrong
//   outcome(value)               for the directory programs and batch, which report a refusal inside
//                                their result instead of failing: the outcome word of that refusal
// and refusalsUnder(attack) says which failures the attack can cause. Anything else (a wrong
// answer, an untyped throw, an errno the attack cannot explain) is counted as unexpected.
//
// No rename cell under the hardlink attack: both names of that hard link are inside the root, so
// renaming one moves nothing outside whatever an executor does; a cell that cannot escape proves
// nothing.
import * as fs from "node:fs"
import * as path from "node:path"
import { inside, leaks } from "./arena.mjs"

const fileFor = (attack) => (attack === "hardlink" ? "file.txt" : "d/sub/deep/inner.txt")
const dirAttacks = ["symlink", "dirswap"]
const allAttacks = ["symlink", "dirswap", "hardlink"]

/**
 * The failures an attack can cause, each typed: under a directory attack, a link met on the way
 * (ELOOP, or the walk's own check), the lookup ending outside the root (openat2's EXDEV when a
 * directory was moved out under it), or a name that was not a directory when opened and was no
 * longer a link when asked why (ENOTDIR); under the hard-link attack, the hard link refused.
 */
export const refusalsUnder = (attack) => (attack === "hardlink" ? ["hardlink"] : ["symlink", "escape", "ENOTDIR"])

/**
 * An operation that holds a directory across steps (a recursive listing, a glob, the directory
 * programs, a recursive mkdir) proves it is still beneath the root before each act. Under a
 * directory attack the held directory can be exchanged with another inside the root (d with the
 * link, or with the planted tree while it sits inside): the proof then refuses with "identity"
 * (EBUSY). A directory moved out of the root is the "escape" refusal, already the attack's. The
 * refusal is only ever accepted as a refusal: what was answered, listed or written is judged by
 * the canary detectors all the same.
 */
const heldRefusals = (attack) => (dirAttacks.includes(attack) ? ["identity"] : [])

/**
 * chmod and chown hold the file they change (the walk opens it O_PATH, then acts through the
 * handle once it is proven). Under the hard-link attack file.txt can be exchanged with .hl between
 * the two: the held object is no longer what the path names, refused as "identity" (EBUSY). When
 * the exchange lands before the open, the held file has two links and is refused as "hardlink".
 */
const heldFileRefusals = (attack) => (attack === "hardlink" ? ["identity"] : [])

/** The refusals a cell accepts: the attack's own, and the operation's (RaceOp.refusals). */
export const refusalsFor = (op, attack) => [...refusalsUnder(attack), ...(op.refusals?.(attack) ?? [])]

const identityOf = (info) => `${info.dev}:${info.ino}`
const listing = ["inner.txt", "nest", "nest/n.txt", "vacant"]
const sameSet = (value, want) => Array.isArray(value) && value.length === want.length && [...value].sort().every((v, i) => v === want[i])
// A listing is right when it is the inside listing, or that listing with the entries below a listed
// subdirectory left out: a recursive listing does not list the subtree of a subdirectory that a
// concurrent change took elsewhere in the root (docs/moved-out.md), and under a directory attack d
// is such a change. Every name given must still be an inside one, and every name left out must lie
// below a directory that was listed.
const rightListing = (value) => {
  if (!Array.isArray(value) || new Set(value).size !== value.length) return false
  if (!value.every((v) => listing.includes(v))) return false
  return listing.every((want) => value.includes(want) || value.some((dir) => want.startsWith(`${dir}/`)))
}
const text = (v) => (v instanceof Uint8Array ? Buffer.from(v).toString() : String(v))

const rightContent = (value, _truth, attack) =>
  text(value) === inside[fileFor(attack)] ? null : `content ${JSON.stringify(text(value).slice(0, 60))}`
const rightInfo = (value, truth, attack) =>
  identityOf(value) === truth.identities[fileFor(attack)] ? null : `identity ${identityOf(value)}`
const nothing = (value) => (value === undefined || value === null ? null : `answered ${typeof value}`)

/**
 * A recursive makeDirectory's answer, as Node's mkdir gives it: nothing (all there already, or an
 * executor that answers nothing), or the first directory it made, which must be one of `target`'s
 * own ancestors or `target` itself, never another name.
 */
const firstMadeOf = (target) => (value) => {
  if (value === undefined || value === null) return null
  const parts = target.split("/")
  const steps = parts.map((_, i) => parts.slice(0, i + 1).join("/"))
  return typeof value === "string" && steps.includes(value) ? null : `answered ${JSON.stringify(value)}`
}

/**
 * How an operation failed, in one short word: a refusal kind, or an error code or reason. Also
 * reads the fallback's Effect PlatformError (a tagged reason whose description says what was met).
 */
export const outcomeOf = (e) => {
  if (e && typeof e === "object") {
    if (typeof e.refusal === "string" && e.refusal !== "") return e.refusal
    if (typeof e.code === "string" && e.code !== "") return e.code
    if (typeof e.reason === "string") return e.reason
    if (typeof e.reason?._tag === "string") {
      const said = e.reason.description ?? ""
      return said.includes("symbolic link") ? "symlink" : said.includes("hard-linked") ? "hardlink" : e.reason._tag
    }
    if (typeof e._tag === "string") return e._tag
  }
  return "thrown"
}

/**
 * @typedef {{ name: string, attacks: ReadonlyArray<string>,
 *   mutates?: boolean, writes?: boolean,
 *   prepare?: (arena: import("./arena.mjs").Arena) => unknown,
 *   run: (target: any, attack: string, ctx: unknown) => Promise<unknown>,
 *   right: (value: any, truth: import("./arena.mjs").Truth, attack: string) => string | null,
 *   outcome?: (value: any) => string,
 *   refusals?: (attack: string) => ReadonlyArray<string>,
 *   leak?: (arena: import("./arena.mjs").Arena, value: unknown) => boolean }} RaceOp
 * mutates: changes the tree's shape, so the tree is rebuilt (attacker parked) before each try.
 * writes: may change content, modes or owners, so the canary is checked after each try.
 * refusals: failures the operation itself can answer under the attack, beyond refusalsUnder's.
 * leak: whether a successful answer carries the canary (default: arena.leaks).
 */

/** @type {ReadonlyArray<RaceOp>} */
export const raceOps = [
  {
    name: "exists",
    attacks: dirAttacks,
    // Only the canary has this name: true means the lookup went through a link.
    run: (t) => t.exists("d/sub/deep/canary-deep.txt"),
    right: (v) => (v === false ? null : `answered ${v}`),
    leak: (_arena, v) => v === true
  },
  { name: "stat", attacks: allAttacks, run: (t, a) => t.stat(fileFor(a)), right: rightInfo },
  { name: "readFile", attacks: allAttacks, run: (t, a) => t.readFile(fileFor(a)), right: rightContent },
  {
    name: "writeFile",
    attacks: allAttacks,
    writes: true,
    // A whole-file write holds its directory from the look at the target to the rename.
    refusals: heldRefusals,
    run: (t, a) => t.writeFile(fileFor(a), Buffer.from("written\n")),
    right: nothing
  },
  {
    name: "append",
    attacks: allAttacks,
    writes: true,
    run: (t, a) => t.writeFile(fileFor(a), Buffer.from("appended\n"), { flag: "a" }),
    right: nothing
  },
  {
    name: "chmod",
    attacks: allAttacks,
    writes: true,
    refusals: heldFileRefusals,
    run: (t, a) => t.chmod(fileFor(a), 0o600),
    right: nothing
  },
  {
    name: "chown",
    attacks: allAttacks,
    writes: true,
    refusals: heldFileRefusals,
    run: (t, a) => t.chown(fileFor(a), 1234, 1234),
    right: nothing
  },
  {
    name: "readDirectory",
    attacks: dirAttacks,
    refusals: heldRefusals,
    run: (t) => t.readDirectory("d/sub/deep", { recursive: true }),
    right: (v) => (rightListing(v) ? null : `listed ${JSON.stringify(v)}`)
  },
  {
    name: "glob",
    attacks: dirAttacks,
    refusals: heldRefusals,
    run: (t) => t.glob("**", { root: "d/sub/deep" }),
    // A glob root that is not a directory matches nothing (Effect's glob does the same). The attack
    // can make d/sub/deep a link at the moment it is opened and a directory again when asked why,
    // which elsewhere is the ENOTDIR failure: count it as that.
    outcome: (v) => (Array.isArray(v) && v.length === 0 ? "ENOTDIR" : "ok"),
    right: (v) => (rightListing(v) || sameSet(v, []) ? null : `matched ${JSON.stringify(v)}`)
  },
  {
    name: "makeDirectory",
    attacks: dirAttacks,
    mutates: true,
    writes: true,
    run: (t) => t.makeDirectory("d/sub/deep/made"),
    right: nothing
  },
  {
    name: "makeDirectory-recursive",
    attacks: dirAttacks,
    refusals: heldRefusals,
    mutates: true,
    writes: true,
    run: (t) => t.makeDirectory("d/sub/deep/made/more", { recursive: true }),
    right: firstMadeOf("d/sub/deep/made/more")
  },
  {
    name: "mkdirs",
    attacks: dirAttacks,
    refusals: heldRefusals,
    mutates: true,
    writes: true,
    run: (t) =>
      t.mkdirs([
        { path: "d/sub/deep/made", mode: 0o700 },
        { path: "d/sub/deep/made/x", mode: 0o700 }
      ]),
    // A refusal stops the program: whatever it created before is reported, in plan order. A
    // directory is reported once made, so the proof before its exact mode is set can refuse after
    // both were made (whether they were made inside is the canary's to judge).
    outcome: (v) => (v.error === null ? "ok" : outcomeOf(v.error)),
    right: (v) => {
      const made = v.created.map((c) => c.path).join(",")
      const all = "d/sub/deep/made,d/sub/deep/made/x"
      const want = v.error === null ? all : ["", "d/sub/deep/made", all]
      return (Array.isArray(want) ? want.includes(made) : made === want) ? null : `created ${made}`
    }
  },
  {
    name: "remove-recursive",
    attacks: dirAttacks,
    refusals: heldRefusals,
    mutates: true,
    writes: true,
    run: (t) => t.remove("d/sub/deep/nest", { recursive: true }),
    right: nothing
  },
  {
    name: "rename",
    attacks: dirAttacks,
    mutates: true,
    writes: true,
    run: (t) => t.rename("d/sub/deep/inner.txt", "d/sub/deep/renamed.txt"),
    right: nothing
  },
  {
    name: "rmdirs",
    attacks: dirAttacks,
    refusals: heldRefusals,
    mutates: true,
    writes: true,
    // The identity the caller recorded when it created d/sub/deep/vacant: the real one, inside.
    prepare: (arena) => {
      const st = fs.statSync(path.join(arena.root, "d/sub/deep/vacant"), { bigint: true })
      return `${st.dev}:${st.ino}`
    },
    run: (t, _a, identity) => t.rmdirs([{ path: "d/sub/deep/vacant", identity }]),
    // A member is refused inside the result, not by failing: look there.
    outcome: (v) => {
      const m = v.members[0]
      return m?.status === "removed" ? "ok" : m?.error ? outcomeOf(m.error) : `status ${m?.status}`
    },
    right: (v) =>
      v.members.length === 1 && ["removed", "refused"].includes(v.members[0].status) ? null : `members ${JSON.stringify(v.members)}`
  },
  {
    name: "batch",
    attacks: allAttacks,
    refusals: heldRefusals,
    run: (t, a) =>
      t.batch([
        { operation: "readFile", path: fileFor(a) },
        { operation: "stat", path: fileFor(a) },
        { operation: "readDirectory", path: "d/sub/deep", recursive: true },
        { operation: "exists", path: "d/sub/deep/canary-deep.txt" }
      ]),
    // The first member that failed says how the batch ended; each fails alone.
    outcome: (v) => {
      const failed = Array.isArray(v) ? v.find((e) => !e.ok) : undefined
      return failed === undefined ? "ok" : outcomeOf(failed.error)
    },
    // Every member that succeeded must be right; the failed ones must be refusals.
    right: (v, truth, attack) => {
      if (!Array.isArray(v) || v.length !== 4) return `answered ${JSON.stringify(v)}`
      const checks = [
        (x) => rightContent(x, truth, attack),
        (x) => rightInfo(x, truth, attack),
        (x) => (rightListing(x) ? null : `listed ${JSON.stringify(x)}`),
        (x) => (x === false ? null : `exists answered ${x}`)
      ]
      for (const [i, e] of v.entries()) {
        if (e.ok) {
          const wrong = checks[i](e.value)
          if (wrong) return `member ${i}: ${wrong}`
        } else if (![...refusalsUnder(attack), ...heldRefusals(attack)].includes(outcomeOf(e.error))) {
          return `member ${i} failed with ${outcomeOf(e.error)}`
        }
      }
      return null
    },
    // Only members that succeeded are looked at: a refusal's message names the path it refused.
    leak: (arena, v) =>
      Array.isArray(v) && ((v[3]?.ok === true && v[3].value === true) || v.some((e) => e?.ok === true && leaks(arena, e.value)))
  }
]
