import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, FileSystem } from "effect"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { sourceTree } from "../effect/conformance.ts"
import { type Harness, harness, spellings } from "./support.ts"

const tree = sourceTree

// The rest of what the fallback's resolve and glob must do is in the shared conformance suite
// (test/effect/conformance.ts), over every executor. This case stays the fallback's alone: the
// native extension does not yet answer every pattern as Effect does (for "**" excluding "**" it
// answers the root itself, where Effect answers nothing).
describe.each(spellings)("fallback glob (%s root)", (spelling) => {
  const glob = (h: Harness, pattern: string, exclude?: Array<string>, root = h.base) =>
    h.run<Array<string>>({
      operation: "glob",
      pattern,
      root,
      ...(exclude === undefined ? {} : { options: { exclude } })
    })

  it("answers what Effect's NodeFileSystem.glob answers on a link-free tree, excludes included", async () => {
    const h = await harness(spelling, tree)
    const reference = (pattern: string, exclude: Array<string>) =>
      Effect.runPromise(
        Effect.gen(function* () {
          const efs = yield* FileSystem.FileSystem
          return yield* efs.glob(pattern, { root: h.base, exclude })
        }).pipe(Effect.provide(NodeFileSystem.layer))
      )
    const cases: Array<[string, Array<string>]> = [
      [h.at("**/*.ts"), []],
      [h.at("**/*.ts"), [h.at("node_modules/**")]],
      [h.at("**"), [h.at("src")]],
      [h.at("src/*.ts"), [h.at("src/util.ts")]],
      [h.at("src/*.ts"), [`${path.dirname(h.base)}/**`]], // an absolute exclude above the root
      [h.at("src/{main,util}.ts"), []],
      [h.canonical("**/*.md"), [h.at("README.md")]], // another spelling of the root: no match
      [h.at("src/**"), []],
      [h.at("*/"), []],
      [h.at("src/?ain.[st]s"), []],
      [h.at("**"), [h.at("**")]],
      [h.at("**/.hidden.ts"), []],
      [`${h.base}/src/../README.md`, []]
    ]
    for (const [pattern, exclude] of cases) {
      expect(await glob(h, pattern, exclude), `${pattern} exclude ${exclude}`).toEqual(await reference(pattern, exclude))
    }
    // A relative exclude is the caller's, written beside a relative pattern the kernel made absolute
    // against `root`: the answer is Effect's answer to that relative call, made absolute.
    const relative: Array<[string, Array<string>]> = [
      ["**/*.ts", ["node_modules/**"]],
      ["**/*.ts", ["node_modules"]],
      ["**/*", ["src/*.ts", "*.md"]]
    ]
    for (const [pattern, exclude] of relative) {
      const expected = (await reference(pattern, exclude)).map((p) => path.join(h.base, p))
      expect(await glob(h, h.at(pattern), exclude), `${pattern} exclude ${exclude} (relative)`).toEqual(expected)
    }
  })
})
