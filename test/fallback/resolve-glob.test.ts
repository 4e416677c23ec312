import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, FileSystem } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { expectReason, type Harness, harness, spellings } from "./support.ts"

const tree = {
  "src/main.ts": "",
  "src/util.ts": "",
  "src/.hidden.ts": "",
  "src/deep/x.ts": "",
  "node_modules/dep/index.ts": "",
  "README.md": ""
}

describe.each(spellings)("fallback resolve (%s root)", (spelling) => {
  const setup = async () => {
    const h = await harness(spelling, tree)
    fs.symlinkSync(h.s.outside, h.s.abs("src/escape"))
    fs.symlinkSync("main.ts", h.s.abs("src/alias"))
    return h
  }

  it("answers the whole request when no link is met, existing or not, in boundary spelling", async () => {
    const h = await setup()
    expect(await h.run({ operation: "resolve", path: h.at("src/main.ts") })).toEqual({
      path: h.canonical("src/main.ts"),
      target: null
    })
    expect(await h.run({ operation: "resolve", path: h.at("src/missing/and/more") })).toEqual({
      path: h.canonical("src/missing/and/more"),
      target: null
    })
    expect(await h.run({ operation: "resolve", path: h.at("src/deep/../main.ts") })).toEqual({
      path: h.canonical("src/main.ts"),
      target: null
    })
    expect(await h.run({ operation: "resolve", path: h.at("") })).toEqual({ path: h.canonical(""), target: null })
  })

  it("stops at the first link, last or on the way, with its text, never opening what it names", async () => {
    const h = await setup()
    expect(await h.run({ operation: "resolve", path: h.at("src/alias") })).toEqual({
      path: h.canonical("src/alias"),
      target: "main.ts"
    })
    expect(await h.run({ operation: "resolve", path: h.at("src/escape/secret.txt") })).toEqual({
      path: h.canonical("src/escape"),
      target: h.s.outside
    })
    expect(await h.run({ operation: "resolve", path: h.at("src/escape/") })).toEqual({
      path: h.canonical("src/escape"),
      target: h.s.outside
    })
  })

  it("refuses a link a later .. climbs out of, answers one after the last .., fails on a file in the middle", async () => {
    const h = await setup()
    expectReason(await h.fail({ operation: "resolve", path: `${h.base}/src/escape/../main.ts` }), "PermissionDenied", /symbolic/)
    expect(await h.run({ operation: "resolve", path: `${h.base}/src/deep/../escape/x` })).toEqual({
      path: h.canonical("src/escape"),
      target: h.s.outside
    })
    for (const p of ["README.md/x", "src/main.ts/y/z", "README.md/"]) {
      expectReason(await h.fail({ operation: "resolve", path: `${h.base}/${p}` }), "BadResource")
    }
  })

  it("refuses an escape and a path outside both roots", async () => {
    const h = await setup()
    expectReason(await h.fail({ operation: "resolve", path: `${h.base}/../outside` }), "PermissionDenied", /escapes/)
    expectReason(await h.fail({ operation: "resolve", path: h.s.secret }), "PermissionDenied", /outside/)
  })
})

describe.each(spellings)("fallback glob (%s root)", (spelling) => {
  const setup = async () => {
    const h = await harness(spelling, tree)
    fs.symlinkSync(h.s.outside, h.s.abs("src/escape"))
    fs.symlinkSync(h.s.outside, h.s.abs("linked"))
    fs.writeFileSync(`${h.s.outside}/evil.ts`, "")
    return h
  }
  const glob = (h: Harness, pattern: string, exclude?: Array<string>, root = h.base) =>
    h.run<Array<string>>({
      operation: "glob",
      pattern,
      root,
      ...(exclude === undefined ? {} : { options: { exclude } })
    })

  it("matches with Effect's glob semantics, answering absolute paths in the pattern's spelling", async () => {
    const h = await setup()
    expect(await glob(h, h.at("src/*.ts"))).toEqual([h.at("src/main.ts"), h.at("src/util.ts")])
    expect(await glob(h, h.at("src/**/*.ts"))).toEqual([h.at("src/deep/x.ts"), h.at("src/main.ts"), h.at("src/util.ts")])
    expect(await glob(h, h.canonical("*.md"))).toEqual([h.canonical("README.md")])
    expect(await glob(h, h.at("nothing/*"))).toEqual([])
    expect(await glob(h, `${h.base}//src/m*.ts`)).toEqual([`${h.base}/src/main.ts`])
    expect(await glob(h, h.base)).toEqual([h.base])
    // An absolute pattern decides alone, whatever `root` says.
    for (const root of [".", "relative", h.s.outside, h.at("src")]) {
      expect(await glob(h, h.at("src/*.ts"), undefined, root)).toEqual([h.at("src/main.ts"), h.at("src/util.ts")])
    }
  })

  it("never traverses a link, wherever the pattern names it", async () => {
    const h = await setup()
    const all = await glob(h, h.at("**/*.ts"))
    expect(all.some((p) => p.includes("evil"))).toBe(false)
    expect(await glob(h, h.at("linked/*.ts"))).toEqual([])
    expect(await glob(h, h.at("src/escape/*"))).toEqual([])
    expect(await glob(h, h.at("*"))).toContain(h.at("linked"))
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

  it("refuses a pattern outside the root and climbing out of it; bad input is BadArgument", async () => {
    const h = await setup()
    expectReason(await h.fail({ operation: "glob", pattern: `${h.s.outside}/*`, root: h.base }), "PermissionDenied")
    expectReason(await h.fail({ operation: "glob", pattern: `${h.at("src")}/../../outside/*`, root: h.base }), "PermissionDenied")
    expectReason(await h.fail({ operation: "glob", pattern: "src/*", root: h.base }), "BadArgument")
    expectReason(await h.fail({ operation: "glob", pattern: h.at("*"), root: 7 }), "BadArgument")
    expectReason(await h.fail({ operation: "glob", pattern: h.at("*"), root: h.base, options: { exclude: "x" } }), "BadArgument")
  })
})
