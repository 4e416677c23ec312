/**
 * Random trees with links, and random read rules over them, for suites that compare two ways of
 * answering the same questions. A fixed seed gives the same tree, so a failing seed can be replayed.
 */
import * as NFS from "node:fs"
import * as NPath from "node:path"
import type { GrantStore } from "../../../src/kernel/index.ts"
import { scratch } from "../../support/tree.ts"

/** A small deterministic generator (mulberry32), so a failing seed can be replayed. */
export const generator = (seed: number) => {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  const pick = <A>(xs: ReadonlyArray<A>): A => xs[int(xs.length)]!
  return { next, int, pick }
}

export const names = ["a", "b", "c", "d"]

export interface World {
  readonly logicalRoot: string
  readonly outside: string
  /** Every path made below the root, relative. */
  readonly made: ReadonlyArray<string>
}

/** A random tree: directories and files three deep, then links of every kind among them. */
export const randomWorld = (seed: number): World => {
  const rng = generator(seed)
  const s = scratch()
  const made: Array<string> = []
  const dirs = [""]
  for (let i = 0; i < 14; i++) {
    const parent = rng.pick(dirs)
    const name = rng.pick(names)
    const rel = parent === "" ? name : `${parent}/${name}`
    if (made.includes(rel) || parent.split("/").length >= 3) continue
    if (rng.next() < 0.45) {
      NFS.mkdirSync(s.abs(rel))
      dirs.push(rel)
    } else NFS.writeFileSync(s.abs(rel), `content of ${rel}`)
    made.push(rel)
  }
  const targets = () => {
    const inside = made.length === 0 ? "a" : rng.pick(made)
    return rng.pick([
      inside,
      `../${inside}`,
      NPath.join(s.root, inside),
      "..",
      ".",
      s.secret,
      s.outside,
      "../outside/secret.txt",
      "missing",
      "loop",
      NPath.dirname(s.root)
    ])
  }
  for (let i = 0; i < 6; i++) {
    const parent = rng.pick(dirs)
    const name = rng.pick([...names, "loop", "l1", "l2"])
    const rel = parent === "" ? name : `${parent}/${name}`
    if (made.includes(rel)) continue
    NFS.symlinkSync(name === "loop" ? "loop" : targets(), s.abs(rel))
    made.push(rel)
  }
  const file = made.find((rel) => NFS.lstatSync(s.abs(rel)).isFile())
  if (file !== undefined && rng.next() < 0.5) {
    NFS.linkSync(s.abs(file), s.abs("hard"))
    made.push("hard")
  }
  // Half the worlds name the workspace through a link, as a program often does.
  let logicalRoot = s.root
  if (rng.next() < 0.5) {
    logicalRoot = NPath.join(NPath.dirname(s.root), "named")
    NFS.symlinkSync(s.root, logicalRoot)
  }
  return { logicalRoot, outside: s.outside, made }
}

/** Random rules: read granted broadly or narrowly, some areas denied, some left unanswered. */
export const randomRules = (seed: number, world: World): GrantStore.Rules => {
  const rng = generator(seed * 7919 + 1)
  const globs = ["**", "a/**", "b", "*/b", "**/c", "d/**", "*", ...world.made]
  const allow = Array.from({ length: 1 + rng.int(3) }, () => ({ action: "fs:read" as const, glob: rng.pick(globs) }))
  if (rng.next() < 0.6) allow.push({ action: "fs:read", glob: "**" })
  const deny = Array.from({ length: rng.int(3) }, () => ({ action: "fs:read" as const, glob: rng.pick(globs) }))
  return { root: world.logicalRoot, allow, deny }
}
