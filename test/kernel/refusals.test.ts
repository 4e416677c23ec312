/**
 * A refusal is not an oracle: the refusal of a denied path says the same thing whatever is behind
 * it (a file, a directory, nothing, a link to outside, to inside, to another denied name, a dangling
 * or looping link, a path running under a file), and never carries the text of a link found there.
 */
import * as NFS from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem, type PlatformError } from "effect"
import { GrantStore } from "../../src/kernel/index.ts"
import { scratch } from "../support/tree.ts"
import { hosts } from "./support/hosts.ts"
import { allowAllBut, kernelCause, kernelLayer, reasonTag, readWrite } from "./support/kernel.ts"

/** `secret/` is read-denied and write-denied; everything else is granted. */
const world = () => {
  const s = scratch()
  s.make({ "pub.txt": "public", "secret/file": "hidden", "secret/dir/inner": "hidden", "secret/other": "x" })
  NFS.symlinkSync(s.secret, s.abs("secret/out")) // to outside
  NFS.symlinkSync("../pub.txt", s.abs("secret/in")) // to a granted file
  NFS.symlinkSync("other", s.abs("secret/denied")) // to another denied name
  NFS.symlinkSync("nowhere-at-all", s.abs("secret/dangling"))
  NFS.symlinkSync("loop", s.abs("secret/loop"))
  NFS.symlinkSync("out", s.abs("secret/chain")) // a link to a link to outside
  NFS.symlinkSync("..", s.abs("secret/up")) // to the workspace root
  const grants = GrantStore.layerRules(allowAllBut(s.root, readWrite("secret/**")))
  return { s, grants }
}

const names = [
  "file",
  "dir",
  "missing",
  "out",
  "in",
  "denied",
  "dangling",
  "loop",
  "chain",
  "up",
  "file/x",
  "dir/x",
  "missing/x",
  "out/x",
  "in/x",
  "dangling/x",
  "loop/x",
  "up/pub.txt"
]

type Operation = readonly [string, (fs: FileSystem.FileSystem, p: string) => Effect.Effect<unknown, PlatformError.PlatformError>]

const reads: ReadonlyArray<Operation> = [
  ["readFileString", (fs, p) => fs.readFileString(p)],
  ["readFile", (fs, p) => fs.readFile(p)],
  ["stat", (fs, p) => fs.stat(p)],
  ["exists", (fs, p) => fs.exists(p)],
  ["readDirectory", (fs, p) => fs.readDirectory(p)],
  ["readLink", (fs, p) => fs.readLink(p)],
  ["realPath", (fs, p) => fs.realPath(p)]
]

const writes: ReadonlyArray<Operation> = [
  ["writeFileString", (fs, p) => fs.writeFileString(p, "x")],
  ["makeDirectory", (fs, p) => fs.makeDirectory(p)],
  ["remove", (fs, p) => fs.remove(p)],
  ["chmod", (fs, p) => fs.chmod(p, 0o600)]
]

/** What a refusal says, with the requested path replaced by a placeholder. */
const shape = (error: unknown, requested: string) => {
  const cause = kernelCause(error)
  const hide = (text: string) => text.split(requested).join("<PATH>")
  return {
    reason: reasonTag(error),
    cause: cause?._tag,
    capability: cause === undefined ? undefined : { ...cause.capability, resource: hide(cause.capability.resource) },
    detail: cause?._tag === "PermissionDenied" ? hide(cause.reason) : undefined,
    message: hide(String((error as { message?: unknown }).message))
  }
}

describe.each(hosts)("refusals of a denied path ($name)", (host) => {
  for (const [method, run] of [...reads, ...writes]) {
    it.effect(`${method}: one answer whatever is behind the name, and no link text`, () =>
      Effect.gen(function* () {
        const { grants, s } = world()
        const shapes = new Map<string, unknown>()
        yield* Effect.gen(function* () {
          const fs = yield* FileSystem.FileSystem
          for (const name of names) {
            const requested = s.abs(`secret/${name}`)
            const error = yield* Effect.flip(run(fs, `secret/${name}`))
            const text = `${String(error)} ${JSON.stringify(error)}`
            // Nothing of what the links say: no outside path, no target name.
            expect(text, name).not.toContain(s.outside)
            expect(text, name).not.toContain(s.abs("pub.txt"))
            expect(text, name).not.toContain("../pub.txt")
            expect(text, name).not.toContain("nowhere-at-all")
            expect(text, name).not.toContain("secret/other")
            shapes.set(name, shape(error, requested))
          }
        }).pipe(Effect.provide(kernelLayer(host.make().layer, s.root, grants)))
        const first = shapes.get("file")
        expect(first).toMatchObject({ reason: "PermissionDenied", cause: "PermissionDenied", capability: { resource: "<PATH>" } })
        for (const [name, got] of shapes) expect(got, name).toEqual(first)
      })
    )
  }
})
