/**
 * The grant stores and the permission errors' round trip through PlatformError.
 */
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem, Layer, Option, PlatformError } from "effect"
import { GrantStore, Permission } from "../../src/kernel/index.ts"
import { scratch } from "../support/tree.ts"
import { hosts } from "./support/hosts.ts"
import { kernelLayer, reasonTag } from "./support/kernel.ts"

const decide = (rules: GrantStore.Rules, capability: Permission.Capability) =>
  Effect.gen(function* () {
    const store = yield* GrantStore.fromRules(rules)
    return yield* store.check(capability).pipe(
      Effect.as("granted"),
      Effect.catch((error) => Effect.succeed(error._tag))
    )
  }).pipe(Effect.provide(NodePath.layer))

describe("GrantStore.fromRules", () => {
  it.effect("allows what an allow rule covers, requires what none does, and deny wins", () =>
    Effect.gen(function* () {
      const rules: GrantStore.Rules = {
        root: "/ws",
        allow: [
          { action: "fs:read", glob: "**" },
          { action: "fs:write", glob: "src/**" }
        ],
        deny: [{ action: "fs:read", glob: "src/secret/**" }]
      }
      expect(yield* decide(rules, { action: "fs:read", resource: "/ws/src/a.ts" })).toBe("granted")
      expect(yield* decide(rules, { action: "fs:write", resource: "/ws/src/a.ts" })).toBe("granted")
      expect(yield* decide(rules, { action: "fs:write", resource: "/ws/README.md" })).toBe("PermissionRequired")
      expect(yield* decide(rules, { action: "fs:read", resource: "/ws/src/secret/key" })).toBe("PermissionDenied")
      expect(yield* decide(rules, { action: "fs:read", resource: "/ws/src/secret" })).toBe("PermissionDenied")
      expect(yield* decide(rules, { action: "fs:read", resource: "/elsewhere/x" })).toBe("PermissionRequired")
      expect(yield* decide(rules, { action: "fs:read", resource: "/ws/.hidden" })).toBe("granted")
    })
  )

  it.effect("spends a quota once per granted check", () =>
    Effect.gen(function* () {
      const store = yield* GrantStore.fromRules({ allow: [{ action: "fs:read", glob: "/ws/**", times: 1 }] })
      const capability = { action: "fs:read", resource: "/ws/a" } as const
      yield* store.check(capability)
      expect((yield* Effect.flip(store.check(capability)))._tag).toBe("PermissionRequired")
    }).pipe(Effect.provide(NodePath.layer))
  )
})

describe("permission errors in a PlatformError", () => {
  it("are projected with reason PermissionDenied and read back by fromPlatformError", () => {
    const errors: ReadonlyArray<Permission.PermissionError> = [
      new Permission.PermissionRequired({ capability: { action: "fs:read", resource: "/ws/a" }, message: "ask" }),
      new Permission.PermissionDenied({ capability: { action: "fs:write", resource: "/ws/b" }, reason: "no" }),
      new Permission.GrantStoreError({ capability: { action: "fs:read", resource: "/ws/c" }, message: "journal down" })
    ]
    for (const error of errors) {
      const projected = Permission.toPlatformError({ method: "readFile", error })
      expect(projected.reason._tag).toBe("PermissionDenied")
      expect((projected.reason as { pathOrDescriptor?: unknown }).pathOrDescriptor).toBe(error.capability.resource)
      expect(Permission.fromPlatformError(projected)).toEqual(Option.some(error))
    }
    const host = PlatformError.systemError({ _tag: "PermissionDenied", module: "FileSystem", method: "readFile" })
    expect(Permission.fromPlatformError(host)).toEqual(Option.none())
  })
})

describe.each(hosts)("a grant store that fails ($name)", (host) => {
  it.effect("refuses the operation, and fails a glob rather than guessing about its results", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "a" })
      const store = GrantStore.GrantStore.of({
        check: (capability) =>
          capability.resource.endsWith("a.txt")
            ? Effect.fail(new Permission.GrantStoreError({ capability, message: "journal down" }))
            : Effect.void
      })
      const errors = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        return [yield* Effect.flip(fs.readFileString("a.txt")), yield* Effect.flip(fs.glob("*"))]
      }).pipe(Effect.provide(kernelLayer(host.make().layer, s.root, Layer.succeed(GrantStore.GrantStore, store))))
      for (const error of errors) {
        expect(reasonTag(error)).toBe("PermissionDenied")
        expect(Option.getOrUndefined(Permission.fromPlatformError(error))?._tag).toBe("GrantStoreError")
      }
    })
  )
})
