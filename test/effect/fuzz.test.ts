/**
 * Requests built at random from the pieces a serialized boundary could deliver: right and wrong
 * operations, paths inside, outside, through links, with `..`, NUL bytes and junk, options of every
 * type. Whatever arrives, the answer is a value or a typed `PlatformError`, never a defect or a
 * crash, and nothing outside the workspace changes. Bounded in runs, not in time.
 */
import { Cause, Effect, Exit, Option } from "effect"
import fc from "fast-check"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { NodeAtomicFileSystem } from "../../src/effect/index.ts"
import { executorOperations } from "../../src/protocol/operations.ts"
import { strategies } from "../support/strategies.ts"
import { base64, workspace } from "./support.ts"

// Every operation, and names no executor knows (one of them an Object.prototype key).
const operations = [...executorOperations, "nope", "", "__proto__"]

const names = ["a", "b", "f.txt", "link", "in", "..", ".", "", "x\0y", "*", "**", "é", " "]

describe.each(strategies)("random requests (%s)", (strategy) => {
  it("answer a value or a typed failure, and never touch the outside", async () => {
    const w = workspace({ "a/f.txt": "f", "a/b/g.txt": "g", "top.txt": "t" })
    fs.symlinkSync(w.s.outside, w.s.abs("link"))
    fs.symlinkSync("b", w.s.abs("a/in"))
    const outsideBefore = fs.readdirSync(w.s.outside)
    const extension = NodeAtomicFileSystem.make({ strategy, batchLimits: { size: 8, response: 1 << 16 } })

    const relative = fc.array(fc.constantFrom(...names), { minLength: 0, maxLength: 4 }).map((p) => p.join("/"))
    const pathValue = fc.oneof(
      relative.map((r) => w.l(r)),
      relative.map((r) => w.b(r)),
      relative.map((r) => path.join(w.s.outside, r)),
      relative,
      fc.constantFrom<unknown>(undefined, null, 7, {}, [], true, w.s.secret, "/", "")
    )
    const options = fc.oneof(
      fc.constant(undefined),
      fc.record(
        {
          recursive: fc.oneof(fc.boolean(), fc.constant<unknown>("yes")),
          force: fc.boolean(),
          mode: fc.oneof(fc.integer({ min: -1, max: 0o10000 }), fc.constant<unknown>("644")),
          uid: fc.constantFrom<unknown>(-1, process.getuid!(), 2 ** 32, "0"),
          gid: fc.constantFrom<unknown>(-1, process.getgid!(), -2),
          flag: fc.constantFrom<unknown>("w", "wx", "a", "r", "z", 1),
          exclude: fc.oneof(fc.array(pathValue, { maxLength: 2 }), fc.constant<unknown>("x"))
        },
        { requiredKeys: [] }
      ),
      fc.constantFrom<unknown>("x", 3, [])
    )
    const member = fc.record({ operation: fc.constantFrom(...operations), path: pathValue }, { requiredKeys: [] })
    const request = fc.record(
      {
        operation: fc.constantFrom(...operations),
        path: pathValue,
        from: pathValue,
        to: pathValue,
        pattern: pathValue,
        root: pathValue,
        data: fc.oneof(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }).map(base64), fc.constant<unknown>(5)),
        encoding: fc.constantFrom<unknown>(undefined, "utf-8", "latin1", "klingon", 5),
        options,
        requests: fc.oneof(fc.array(member, { maxLength: 10 }), fc.constant<unknown>("x")),
        plan: fc.array(fc.record({ path: pathValue, mode: fc.constantFrom<unknown>(undefined, 0o755, "x") }), { maxLength: 3 }),
        owned: fc.array(fc.record({ path: pathValue, identity: fc.constantFrom<unknown>("1:2", "x", 3) }), { maxLength: 3 }),
        boundaryRoot: fc.constantFrom<unknown>(w.boundaryRoot, w.boundaryRoot, w.boundaryRoot, "rel", undefined),
        logicalRoot: fc.constantFrom<unknown>(w.logicalRoot, w.logicalRoot, w.boundaryRoot, 5),
        rootIdentity: fc.constantFrom<unknown>(w.rootIdentity, w.rootIdentity, w.rootIdentity, "1:1", "x")
      },
      { requiredKeys: ["operation"] }
    )

    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const exit = await Effect.runPromiseExit(extension.execute(r as never))
        if (Exit.isFailure(exit)) {
          const error = Cause.findErrorOption(exit.cause)
          expect(Option.isSome(error), Cause.pretty(exit.cause)).toBe(true)
        }
      }),
      { numRuns: 400, seed: 20261130 }
    )
    extension.close()
    expect(fs.readdirSync(w.s.outside)).toEqual(outsideBefore)
    expect(fs.readFileSync(w.s.secret, "utf8")).toBe("TOP SECRET")
    expect(fs.statSync(w.s.secret).mode & 0o777).toBe(0o644)
  })
})
