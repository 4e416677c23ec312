// The operations run through the contested path, each against the attacks it is exposed to.
//
// A target is anything with PinnedRoot's method names (PinnedRoot itself, the path-based fallback,
// the naive stand-in). Paths: d/sub/... is contested by the symlink and dirswap attacks (d flips),
// file.txt by the hardlink attack.
import * as fs from "node:fs"
import * as path from "node:path"
import { leaks } from "./arena.mjs"

const fileFor = (attack) => (attack === "hardlink" ? "file.txt" : "d/sub/g.txt")
const dirAttacks = ["symlink", "dirswap"]
const allAttacks = ["symlink", "dirswap", "hardlink"]

/**
 * @typedef {{ name: string, attacks: ReadonlyArray<string>,
 *   mutates?: boolean, writes?: boolean,
 *   prepare?: (arena: import("./arena.mjs").Arena) => unknown,
 *   run: (target: any, attack: string, ctx: unknown) => Promise<unknown>,
 *   leak?: (arena: import("./arena.mjs").Arena, value: unknown) => boolean }} RaceOp
 * mutates: changes the tree's shape, so the tree is rebuilt (attacker parked) before each try.
 * writes: may change content, modes or owners, so the canary is checked after each try.
 * leak: whether a successful answer carries the canary (default: arena.leaks).
 */

/** @type {ReadonlyArray<RaceOp>} */
export const raceOps = [
  {
    name: "exists",
    attacks: dirAttacks,
    // Only the canary has this name: true means the lookup went through the link.
    run: (t) => t.exists("d/sub/canary-only.txt"),
    leak: (_arena, v) => v === true
  },
  { name: "stat", attacks: allAttacks, run: (t, a) => t.stat(fileFor(a)) },
  { name: "readFile", attacks: allAttacks, run: (t, a) => t.readFile(fileFor(a)) },
  {
    name: "writeFile",
    attacks: allAttacks,
    writes: true,
    run: (t, a) => t.writeFile(fileFor(a), Buffer.from("written\n"))
  },
  {
    name: "append",
    attacks: allAttacks,
    writes: true,
    run: (t, a) => t.writeFile(fileFor(a), Buffer.from("appended\n"), { flag: "a" })
  },
  { name: "chmod", attacks: allAttacks, writes: true, run: (t, a) => t.chmod(fileFor(a), 0o600) },
  { name: "chown", attacks: allAttacks, writes: true, run: (t, a) => t.chown(fileFor(a), 1234, 1234) },
  {
    name: "readDirectory",
    attacks: dirAttacks,
    run: (t) => t.readDirectory("d/sub", { recursive: true })
  },
  { name: "glob", attacks: dirAttacks, run: (t) => t.glob("**", { root: "d/sub" }) },
  {
    name: "makeDirectory",
    attacks: dirAttacks,
    mutates: true,
    writes: true,
    run: (t) => t.makeDirectory("d/sub/made")
  },
  {
    name: "makeDirectory-recursive",
    attacks: dirAttacks,
    mutates: true,
    writes: true,
    run: (t) => t.makeDirectory("d/sub/deep/made/more", { recursive: true })
  },
  {
    name: "mkdirs",
    attacks: dirAttacks,
    mutates: true,
    writes: true,
    run: (t) => t.mkdirs([{ path: "d/sub/made", mode: 0o700 }, { path: "d/sub/made/x", mode: 0o700 }])
  },
  {
    name: "remove-recursive",
    attacks: dirAttacks,
    mutates: true,
    writes: true,
    run: (t) => t.remove("d/sub/deep", { recursive: true })
  },
  {
    name: "rename",
    attacks: allAttacks,
    mutates: true,
    writes: true,
    run: (t, a) => (a === "hardlink" ? t.rename("file.txt", "renamed.txt") : t.rename("d/sub/g.txt", "d/sub/renamed.txt"))
  },
  {
    name: "rmdirs",
    attacks: dirAttacks,
    mutates: true,
    writes: true,
    // The identity the caller recorded when it created d/sub/empty: the real one, inside.
    prepare: (arena) => {
      const st = fs.statSync(path.join(arena.root, "d/sub/empty"), { bigint: true })
      return `${st.dev}:${st.ino}`
    },
    run: (t, _a, identity) => t.rmdirs([{ path: "d/sub/empty", identity }])
  },
  {
    name: "batch",
    attacks: allAttacks,
    run: (t, a) =>
      t.batch([
        { operation: "readFile", path: fileFor(a) },
        { operation: "stat", path: fileFor(a) },
        { operation: "readDirectory", path: "d/sub", recursive: true },
        { operation: "exists", path: "d/sub/canary-only.txt" }
      ]),
    // Only members that succeeded are looked at: a refusal's message names the path it refused.
    leak: (arena, v) =>
      Array.isArray(v) &&
      ((v[3]?.ok === true && v[3].value === true) || v.some((e) => e?.ok === true && leaks(arena, e.value)))
  }
]
