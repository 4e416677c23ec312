import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem } from "effect"
import { scratch } from "../support/tree.ts"
import { hosts } from "./support/hosts.ts"
import { allowAll, kernelLayer } from "./support/kernel.ts"

describe.each(hosts)("smoke ($name)", (host) => {
  it.effect("reads a file", () => {
    const s = scratch()
    s.make({ "a.txt": "hi" })
    return Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      expect(yield* fs.readFileString("a.txt")).toBe("hi")
    }).pipe(Effect.provide(kernelLayer(host.make().layer, s.root, allowAll(s.root))))
  })
})
