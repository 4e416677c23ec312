/**
 * `glob`'s `exclude` through the kernel means what it means to Effect's own `glob` (4.1): an
 * exclude is matched against the paths as the walk spells them, so a relative exclude applies to a
 * relative pattern (read against `root`) and an absolute one to an absolute pattern; the other kind
 * never matches. Every case is compared with `NodeFileSystem`'s answer on the same tree.
 */
import * as NPath from "node:path"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem } from "effect"
import { scratch, type Scratch } from "../support/tree.ts"
import { hosts } from "./support/hosts.ts"
import { allowAll, kernelLayer } from "./support/kernel.ts"

interface Case {
  readonly name: string
  readonly pattern: (s: Scratch) => string
  readonly options: (s: Scratch) => { readonly root?: string; readonly exclude: ReadonlyArray<string> }
}

const cases: ReadonlyArray<Case> = [
  { name: "a relative directory tree", pattern: () => "**/*.ts", options: () => ({ exclude: ["node_modules/**"] }) },
  { name: "a relative directory name", pattern: () => "**/*.ts", options: () => ({ exclude: ["node_modules"] }) },
  { name: "a relative wildcard", pattern: () => "**/*", options: () => ({ exclude: ["**/*.js"] }) },
  { name: "relative to another root", pattern: () => "*.ts", options: () => ({ root: "src", exclude: ["a.ts"] }) },
  { name: "a relative directory below", pattern: () => "src/**/*.ts", options: () => ({ exclude: ["src/lib/**"] }) },
  {
    name: "an absolute exclude with an absolute pattern",
    pattern: (s) => `${s.root}/**/*.ts`,
    options: (s) => ({ exclude: [`${s.root}/node_modules/**`] })
  },
  {
    name: "a relative exclude with an absolute pattern (never matches)",
    pattern: (s) => `${s.root}/**/*.ts`,
    options: () => ({ exclude: ["node_modules/**"] })
  },
  {
    name: "an absolute exclude with a relative pattern (never matches)",
    pattern: () => "**/*.ts",
    options: (s) => ({ exclude: [`${s.root}/node_modules/**`] })
  }
]

const world = () => {
  const s = scratch()
  s.make({
    "src/a.ts": "a",
    "src/b.js": "b",
    "src/lib/c.ts": "c",
    "node_modules/x/x.ts": "x",
    "node_modules/y.ts": "y",
    "top.ts": "t"
  })
  return s
}

/** Absolute, sorted: the kernel answers in the client's shape, Effect relative to `root`. */
const absolute = (s: Scratch, root: string | undefined, paths: ReadonlyArray<string>) =>
  paths.map((p) => (NPath.isAbsolute(p) ? p : NPath.join(s.root, root ?? "", p))).sort()

describe.each(hosts)("glob excludes through the kernel ($name)", (host) => {
  for (const c of cases) {
    it.effect(`${c.name}: as Effect's own glob`, () =>
      Effect.gen(function* () {
        const s = world()
        const options = c.options(s)
        const effects = yield* Effect.gen(function* () {
          const fs = yield* FileSystem.FileSystem
          return yield* fs.glob(c.pattern(s), { ...options, root: NPath.join(s.root, options.root ?? "") })
        }).pipe(Effect.provide(NodeFileSystem.layer))
        const ours = yield* Effect.gen(function* () {
          const fs = yield* FileSystem.FileSystem
          return yield* fs.glob(c.pattern(s), options)
        }).pipe(Effect.provide(kernelLayer(host.make().layer, s.root, allowAll(s.root))))
        expect(absolute(s, options.root, ours)).toEqual(absolute(s, options.root, effects))
      })
    )
  }
})
