/**
 * Listings (`readDirectory`, recursive or not, alone or in a batch, and `glob`) show a name only
 * when the caller may read it and every directory between the listed one and it. A glob pattern is
 * normalized (as the client's kernel normalizes it) before it is authorized, so `..` cannot route
 * around a denied folder or answer one file twice.
 */
import * as NFS from "node:fs"
import * as NPath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem, Layer, Result } from "effect"
import { FileSystemBatch, GrantStore, Permission } from "../../src/kernel/index.ts"
import { scratch } from "../support/tree.ts"
import { hosts } from "./support/hosts.ts"
import { allowAll, kernelLayer, reasonTag } from "./support/kernel.ts"

const world = () => {
  const s = scratch()
  s.make({
    "pub/a.txt": "a",
    "pub/deep/b.txt": "b",
    "secret/key.txt": "k",
    "secret/deep/more.txt": "m",
    "priv/inner.txt": "i",
    ".env": "TOKEN=1",
    "top.txt": "t"
  })
  return s
}

/** secret/ by rule; `.env` alone; and `priv` as a directory only (a store may decide that way). */
const layerFor = (host: (typeof hosts)[number], root: string) => {
  const rules = GrantStore.fromRules({
    root,
    allow: [{ action: "fs:read", glob: "**" }],
    deny: [
      { action: "fs:read", glob: "secret/**" },
      { action: "fs:read", glob: ".env" }
    ]
  })
  const store = Effect.map(rules, (inner) =>
    GrantStore.GrantStore.of({
      check: (capability) =>
        capability.resource === NPath.join(root, "priv")
          ? Effect.fail(new Permission.PermissionDenied({ capability, reason: "denied directory" }))
          : inner.check(capability)
    })
  )
  return kernelLayer(host.make().layer, root, Layer.effect(GrantStore.GrantStore, store))
}

const listedUnder = (root: string, names: ReadonlyArray<string>) =>
  names.map((n) => (NPath.isAbsolute(n) ? NPath.relative(root, n) : n)).sort()

describe.each(hosts)("listings show only what may be read ($name)", (host) => {
  it.effect("readDirectory recursive lists nothing under a read-denied folder, nor the denied names", () =>
    Effect.gen(function* () {
      const s = world()
      const names = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        return yield* fs.readDirectory(".", { recursive: true })
      }).pipe(Effect.provide(layerFor(host, s.root)))
      expect([...names].sort()).toEqual(["pub", "pub/a.txt", "pub/deep", "pub/deep/b.txt", "top.txt"])
    })
  )

  it.effect("readDirectory lists no read-denied name", () =>
    Effect.gen(function* () {
      const s = world()
      const names = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        return yield* fs.readDirectory(".")
      }).pipe(Effect.provide(layerFor(host, s.root)))
      expect([...names].sort()).toEqual(["pub", "top.txt"])
    })
  )

  it.effect("a batch's readDirectory members are filtered the same way", () =>
    Effect.gen(function* () {
      const s = world()
      const response = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        return yield* FileSystemBatch.fromFileSystem(fs)!.execute([
          { operation: "readDirectory", path: ".", options: { recursive: true } },
          { operation: "readDirectory", path: "." }
        ])
      }).pipe(Effect.provide(layerFor(host, s.root)))
      const values = [...response.entries]
        .sort((a, b) => a.index - b.index)
        .map((e) => (Result.isSuccess(e.result) ? [...(e.result.success.value as Array<string>)].sort() : reasonTag(e.result.failure)))
      expect(values).toEqual([
        ["pub", "pub/a.txt", "pub/deep", "pub/deep/b.txt", "top.txt"],
        ["pub", "top.txt"]
      ])
    })
  )

  it.effect("glob lists nothing under a read-denied folder (a denied directory holds its names)", () =>
    Effect.gen(function* () {
      const s = world()
      const found = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        return yield* fs.glob("**/*.txt")
      }).pipe(Effect.provide(layerFor(host, s.root)))
      expect(listedUnder(s.root, found)).toEqual(["pub/a.txt", "pub/deep/b.txt", "top.txt"])
    })
  )

  it.effect("a glob pattern is normalized before it is authorized: `..` neither routes around a denial nor duplicates", () =>
    Effect.gen(function* () {
      const s = world()
      const asked: Array<string> = []
      const [refused, pub] = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        return [yield* Effect.flip(fs.glob("*/../secret/*")), yield* fs.glob("*/../pub/*.txt")] as const
      }).pipe(
        Effect.provide(
          kernelLayer(
            host.make().layer,
            s.root,
            Layer.effect(
              GrantStore.GrantStore,
              Effect.map(
                GrantStore.fromRules({
                  root: s.root,
                  allow: [{ action: "fs:read", glob: "**" }],
                  deny: [{ action: "fs:read", glob: "secret/**" }]
                }),
                (inner) =>
                  GrantStore.GrantStore.of({
                    check: (c) =>
                      Effect.andThen(
                        Effect.sync(() => void asked.push(c.resource)),
                        inner.check(c)
                      )
                  })
              )
            )
          )
        )
      )
      expect(reasonTag(refused)).toBe("PermissionDenied")
      expect(asked[0]).toBe(s.abs("secret/*"))
      expect(listedUnder(s.root, pub)).toEqual(["pub/a.txt"])
    })
  )
})

describe.each(hosts)("the one depth-limit refusal, through the kernel ($name)", (host) => {
  it.effect("a recursive listing or recursive remove deeper than 256 levels is BadArgument, and nothing is removed", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "deep/": "" })
      NFS.mkdirSync(s.abs(`deep/${Array(257).fill("d").join("/")}`), { recursive: true })
      const layer = kernelLayer(host.make().layer, s.root, allowAll(s.root))
      const listed = yield* Effect.flip(
        Effect.gen(function* () {
          const fs = yield* FileSystem.FileSystem
          return yield* fs.readDirectory("deep", { recursive: true })
        }).pipe(Effect.provide(layer))
      )
      expect(reasonTag(listed)).toBe("BadArgument")
      expect(listed.reason.description).toMatch(/deeper than the recursive listing limit of 256 levels/)
      // Recursive remove authorizes the tree by listing it first, so it meets the same refusal.
      const removed = yield* Effect.flip(
        Effect.gen(function* () {
          const fs = yield* FileSystem.FileSystem
          return yield* fs.remove("deep", { recursive: true })
        }).pipe(Effect.provide(layer))
      )
      expect(reasonTag(removed)).toBe("BadArgument")
      expect(NFS.existsSync(s.abs("deep"))).toBe(true)
    })
  )
})
