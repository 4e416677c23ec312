/**
 * The README's kernel example, run (over the first host of the suite, with the workspace a scratch
 * tree), so the documentation cannot drift from the code.
 */
import * as NFS from "node:fs"
import * as NodePath from "@effect/platform-node/NodePath"
import { expect, it } from "@effect/vitest"
import { Effect, FileSystem, Layer, Option } from "effect"
import { GrantStore, KernelFileSystem, Permission, Workspace } from "../../src/kernel/index.ts"
import { scratch } from "../support/tree.ts"
import { hosts } from "./support/hosts.ts"

it.effect("the README program: a formatter that may read the tree and write src/ only", () =>
  Effect.gen(function*() {
    const s = scratch()
    s.make({ "src/a.ts": "a  ", "src/b.ts": "b\n\n", "secrets/key.ts": "KEY", ".env": "TOKEN=1", "README.md": "r" })
    const root = s.root

    // --- README example starts ---
    const Kernel = KernelFileSystem.layer.pipe(
      Layer.provide(Layer.mergeAll(
        hosts[0]!.make().layer, // NodeAtomicFileSystem.layer in the README
        Workspace.layer(root),
        GrantStore.layerRules({
          root,
          allow: [{ action: "fs:read", glob: "**" }, { action: "fs:write", glob: "src/**" }],
          deny: [{ action: "fs:read", glob: ".env*" }, { action: "fs:read", glob: "secrets/**" }]
        })
      )),
      Layer.provideMerge(NodePath.layer)
    )

    const program = Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem // the guarded one; this code need not know
      const files = yield* fs.glob("**/*.ts") // secrets/key.ts is not even listed
      for (const file of files) {
        const text = yield* fs.readFileString(file)
        yield* fs.writeFileString(file, text.trimEnd() + "\n")
      }
      const refused = yield* Effect.flip(fs.readFileString(".env"))
      return { files, refused: Permission.fromPlatformError(refused) }
    })
    // --- README example ends ---

    const { files, refused } = yield* program.pipe(Effect.provide(Kernel))
    expect([...files].sort()).toEqual([s.abs("src/a.ts"), s.abs("src/b.ts")])
    expect(NFS.readFileSync(s.abs("src/a.ts"), "utf8")).toBe("a\n")
    expect(NFS.readFileSync(s.abs("secrets/key.ts"), "utf8")).toBe("KEY")
    expect(Option.map(refused, (e) => [e._tag, e.capability.resource])).toEqual(Option.some(["PermissionDenied", s.abs(".env")]))
  }))
