/**
 * A listing filtered by the read grants asks one question per directory, not one per name, where
 * the store can say that everything below a directory is granted (`GrantStore.grantsBelow`, which
 * the rule store answers when no deny rule or quota could reach below it). The names shown must be
 * exactly those shown when every name is asked about: both ways run side by side on random trees
 * with links under random rules (deny rules, quotas, narrow and broad grants), over both resolve
 * strategies.
 */
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem, Layer, type PlatformError, Result } from "effect"
import * as NodeAtomicFileSystem from "../../src/effect/NodeAtomicFileSystem.ts"
import { GrantStore } from "../../src/kernel/index.ts"
import { strategies } from "../support/strategies.ts"
import { kernelLayer } from "./support/kernel.ts"
import { randomRules, randomWorld, type World } from "./support/randomTrees.ts"

/** The rule store, its questions written down; `grantsBelow` passed on or withheld. */
const store = (rules: GrantStore.Rules, log: Array<string>, perDirectory: boolean) =>
  Layer.effect(
    GrantStore.GrantStore,
    Effect.map(GrantStore.fromRules(rules), (inner) =>
      GrantStore.GrantStore.of({
        check: (capability) =>
          Effect.andThen(
            Effect.sync(() => void log.push(`${capability.action} ${capability.resource}`)),
            inner.check(capability)
          ),
        grantsBelow: perDirectory ? inner.grantsBelow : undefined
      })
    )
  )

const ruleSets = (seed: number, world: World): ReadonlyArray<GrantStore.Rules> => [
  randomRules(seed, world),
  { root: world.logicalRoot, allow: [{ action: "fs:read", glob: "**" }] },
  { root: world.logicalRoot, allow: [{ action: "fs:read", glob: "**" }], deny: [{ action: "fs:read", glob: "a/**" }] },
  {
    root: world.logicalRoot,
    allow: [
      { action: "fs:read", glob: "b/**" },
      { action: "fs:read", glob: "*" }
    ]
  },
  {
    root: world.logicalRoot,
    allow: [
      { action: "fs:read", glob: "*", times: 3 },
      { action: "fs:read", glob: "**" }
    ]
  }
]

const observed = (result: Result.Result<unknown, PlatformError.PlatformError>) =>
  Result.isSuccess(result) ? { shown: result.success } : { failed: result.failure.reason._tag, message: result.failure.message }

const listings = Effect.gen(function* () {
  const fs = yield* FileSystem.FileSystem
  const out: Array<unknown> = []
  for (const at of [".", "a", "b", "c", "d"]) {
    out.push(observed(yield* Effect.result(fs.readDirectory(at))))
    out.push(observed(yield* Effect.result(fs.readDirectory(at, { recursive: true }))))
  }
  for (const pattern of ["**", "**/*", "a/**", "*/b", "**/c"]) out.push(observed(yield* Effect.result(fs.glob(pattern))))
  return out
})

describe.each(strategies)("listings decided per directory (%s)", (strategy) => {
  it.effect(
    "show exactly the names asked about one by one would show, with fewer questions",
    () =>
      Effect.gen(function* () {
        let spared = 0
        for (let seed = 1; seed <= 12; seed++) {
          const world = randomWorld(seed)
          for (const [r, rules] of ruleSets(seed, world).entries()) {
            const run = (perDirectory: boolean) =>
              Effect.gen(function* () {
                const log: Array<string> = []
                const layer = kernelLayer(NodeAtomicFileSystem.layerWith({ strategy }), world.logicalRoot, store(rules, log, perDirectory))
                const shown = yield* Effect.provide(listings, Layer.provideMerge(layer, NodePath.layer))
                return { shown, log }
              })
            const everyName = yield* run(false)
            const perDirectory = yield* run(true)
            expect({ seed, r, shown: perDirectory.shown }).toEqual({ seed, r, shown: everyName.shown })
            // Only questions are spared, never added, and those left keep their order.
            const left = perDirectory.log
            let k = 0
            for (const question of everyName.log) if (k < left.length && left[k] === question) k++
            expect({ seed, r, subsequence: k }).toEqual({ seed, r, subsequence: left.length })
            spared += everyName.log.length - left.length
          }
        }
        expect(spared).toBeGreaterThan(1000)
      }),
    300_000
  )

  it.effect("under a broad grant, a listing asks nothing about the names it shows", () =>
    Effect.gen(function* () {
      const world = randomWorld(3)
      const log: Array<string> = []
      const rules = { root: world.logicalRoot, allow: [{ action: "fs:read" as const, glob: "**" }] }
      const layer = kernelLayer(NodeAtomicFileSystem.layerWith({ strategy }), world.logicalRoot, store(rules, log, true))
      const shown = yield* Effect.provide(
        Effect.gen(function* () {
          const fs = yield* FileSystem.FileSystem
          return yield* fs.readDirectory(".", { recursive: true })
        }),
        Layer.provideMerge(layer, NodePath.layer)
      )
      expect(shown.length).toBeGreaterThan(3)
      // The authorization of the listed directory itself, and nothing for the names.
      expect(log).toEqual([`fs:read ${world.logicalRoot}`])
    })
  )
})

describe("GrantStore.fromRules grantsBelow", () => {
  it.effect("says yes only where no deny rule or quota can reach and a rule grants everything below", () =>
    Effect.gen(function* () {
      const s = yield* GrantStore.fromRules({
        root: "/w",
        allow: [
          { action: "fs:read", glob: "src/**" },
          { action: "fs:read", glob: "docs/*.md" },
          {
            action: "fs:read",
            glob: "q/**",
            times: 1
          },
          { action: "fs:write", glob: "**" }
        ],
        deny: [
          { action: "fs:read", glob: "src/secret/**" },
          { action: "fs:write", glob: "**/.env" }
        ]
      }).pipe(Effect.provide(NodePath.layer))
      const below = (action: "fs:read" | "fs:write", directory: string) => s.grantsBelow?.(action, directory)
      expect(below("fs:read", "/w/src/lib")).toBe(true)
      expect(below("fs:read", "/w/src")).toBe(false) // a deny rule reaches below
      expect(below("fs:read", "/w/src/secret")).toBe(false)
      expect(below("fs:read", "/w/src/secret/x")).toBe(false)
      expect(below("fs:read", "/w/docs")).toBe(false) // only *.md, not everything
      expect(below("fs:read", "/w/q")).toBe(false) // a quota
      expect(below("fs:read", "/w")).toBe(false)
      expect(below("fs:read", "/elsewhere")).toBe(false)
      expect(below("fs:write", "/w/src")).toBe(false) // `**/.env` may match anywhere
      expect(below("fs:read", "relative/src/lib")).toBe(false)
    })
  )
})
