/**
 * A workspace whose own name holds glob syntax (`ws[1]`, `a*b`, `{x,y}`): its name is literal, so a
 * glob is authorized by the literal prefix below it, never by a prefix cut inside the workspace's
 * own path.
 */
import * as NFS from "node:fs"
import * as NPath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem, Layer, Result } from "effect"
import { FileSystemBatch, GrantStore } from "../../src/kernel/index.ts"
import { scratch } from "../support/tree.ts"
import { hosts } from "./support/hosts.ts"
import { kernelLayer } from "./support/kernel.ts"

const names = ["ws[1]", "a*b", "{x,y}", "q?", "e\\scaped"]

describe.each(hosts)("a workspace named with glob syntax ($name)", (host) => {
  for (const name of names) {
    it.effect(`${name}: glob and batch glob answer, asked about the literal prefix below the workspace`, () =>
      Effect.gen(function* () {
        const s = scratch()
        const root = NPath.join(NPath.dirname(s.root), name)
        NFS.mkdirSync(root)
        NFS.mkdirSync(NPath.join(root, "src"))
        NFS.writeFileSync(NPath.join(root, "a.txt"), "a")
        NFS.writeFileSync(NPath.join(root, "src", "b.txt"), "b")
        const asked: Array<string> = []
        const rules = GrantStore.fromRules({ root, allow: [{ action: "fs:read", glob: "**" }] })
        const store = Layer.effect(
          GrantStore.GrantStore,
          Effect.map(rules, (inner) =>
            GrantStore.GrantStore.of({
              check: (c) =>
                Effect.andThen(
                  Effect.sync(() => void asked.push(c.resource)),
                  inner.check(c)
                )
            })
          )
        )
        const got = yield* Effect.gen(function* () {
          const fs = yield* FileSystem.FileSystem
          const top = yield* fs.glob("*.txt")
          const deep = yield* fs.glob("src/*.txt")
          const batch = yield* FileSystemBatch.fromFileSystem(fs)!.execute([{ operation: "glob", path: "**/*.txt", root: "." }])
          const member = batch.entries[0]!
          return {
            top: top.map((p) => (NPath.isAbsolute(p) ? NPath.relative(root, p) : p)),
            deep: deep.map((p) => (NPath.isAbsolute(p) ? NPath.relative(root, p) : p)),
            batch: Result.isSuccess(member.result)
              ? [...(member.result.success.value as Array<string>)].map((p) => NPath.relative(root, p)).sort()
              : member.result.failure.message
          }
        }).pipe(Effect.provide(kernelLayer(host.make().layer, root, store)))
        expect(got).toEqual({ top: ["a.txt"], deep: ["src/b.txt"], batch: ["a.txt", "src/b.txt"] })
        expect(asked.slice(0, 1)).toEqual([`${root}/*.txt`])
        expect(asked).toContain(`${root}/src/*.txt`)
      })
    )
  }
})
