/**
 * Hostile JavaScript values at the Effect extension's `execute` (`NodeAtomicFileSystem.make()`):
 * a request object or any of its fields may be a Proxy whose reads throw, an object whose getter
 * throws, a BigInt, a Symbol, a function, a 100 KB path, a path of 10,000 components, a polluted
 * prototype; batches may be over the limit. `execute` must hand back an Effect without throwing,
 * and running it must succeed or fail with a PlatformError, the only other ending being the
 * caller's own getter's error coming back as it was thrown. Descriptors return to their baseline
 * once the extension is closed; the outside is untouched. (test/effect/fuzz.test.ts covers
 * well-behaved values of wrong shapes; this covers values that fight back.)
 */
import { Cause, Effect, Exit, Option } from "effect"
import fc from "fast-check"
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { NodeAtomicFileSystem } from "../../src/effect/index.ts"
import { executorOperations } from "../../src/protocol/operations.ts"
import { buildHostile, type HostileSpec, hostileSpec, throwingGetter } from "../support/hostile.mjs"
import { strategies } from "../support/strategies.ts"
import { openDescriptorCount } from "../support/tree.ts"
import { workspace } from "../effect/support.ts"

const seed = Number(process.env.PINNEDFS_SEED ?? 20261130)
const numRuns = Number(process.env.PINNEDFS_RUNS ?? 300)

class Sentinel extends Error {}

const OPERATIONS = [...executorOperations, "nope", "constructor", "__proto__", "toString"]
const FIELDS = [
  "path",
  "from",
  "to",
  "pattern",
  "root",
  "data",
  "encoding",
  "options",
  "requests",
  "plan",
  "owned",
  "boundaryRoot",
  "logicalRoot",
  "rootIdentity",
  "operation"
]

type Spec = HostileSpec

describe.each(strategies)("Effect extension under hostile values (%s)", (strategy) => {
  it("answers a value or a PlatformError, never a defect of its own", async () => {
    const w = workspace({ "a/f.txt": "f", "top.txt": "t" })
    fs.symlinkSync(w.s.outside, w.s.abs("link"))
    const before = openDescriptorCount()
    const extension = NodeAtomicFileSystem.make({ strategy, batchLimits: { size: 8, response: 1 << 16 } })

    const paths = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom("ABS", "ABS_DIR", "ABS_LOGICAL", "ABS_ROOT") },
      fc.constantFrom("", "a/f.txt", "top.txt", "link/secret.txt", "../outside/secret.txt", "x\0y", "BIG", "COMPONENTS", "ABS", "ABS_OUT"),
      fc.string({ maxLength: 20 })
    )
    const path = (s: string): string => {
      if (s === "BIG") return w.b("a".repeat(100 * 1024))
      if (s === "COMPONENTS") return w.b("a/".repeat(10_000) + "f")
      if (s === "ABS") return w.b("a/f.txt")
      if (s === "ABS_OUT") return w.s.secret
      if (s === "ABS_DIR") return w.b("a")
      if (s === "ABS_LOGICAL") return w.l("a/f.txt")
      if (s === "ABS_ROOT") return w.b("")
      return s
    }
    // This suite's own kinds, beside the shared ones (test/support/hostile.mjs).
    const kinds: Record<string, () => unknown> = {
      fn: () => () => w.b("top.txt"),
      throws: () => throwingGetter("recursive", () => new Sentinel("getter")),
      trap: () =>
        new Proxy(
          {},
          {
            get: () => {
              throw new Sentinel("trap")
            },
            ownKeys: () => {
              throw new Sentinel("trap")
            }
          }
        ),
      polluted: () => Object.create({ path: w.b("link/secret.txt"), operation: "readFile" }),
      hugeArray: () => new Array(100_000).fill(w.b("top.txt")),
      overBatch: () => new Array(50).fill({ operation: "exists", path: w.b("top.txt") })
    }
    const spec: fc.Arbitrary<Spec> = hostileSpec({ paths, kinds: Object.keys(kinds), integers: false })
    const build = (v: Spec): unknown => buildHostile(v, { path, kinds })
    const field = fc.oneof(
      { weight: 4, arbitrary: spec.map((v) => ({ v })) },
      { weight: 1, arbitrary: fc.constant({ getterThrows: true as const }) }
    )
    const request = fc.oneof(
      {
        weight: 6,
        arbitrary: fc.record({
          operation: fc.constantFrom(...OPERATIONS),
          fields: fc.dictionary(fc.constantFrom(...FIELDS), field, { maxKeys: 3 }),
          roots: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) })
        })
      },
      { weight: 1, arbitrary: spec.map((whole) => ({ whole })) }
    )
    const buildRequest = (r: fc.Arbitrary<unknown> extends never ? never : any): unknown => {
      if ("whole" in r) return build(r.whole)
      // A well-formed base (roots and a path inside), so the hostile fields on top meet real work.
      const out: Record<string, unknown> = { operation: r.operation, ...(r.roots ? w.roots : {}), path: w.b("a/f.txt") }
      for (const [k, f] of Object.entries(r.fields as Record<string, { v?: Spec; getterThrows?: true }>)) {
        if (f.getterThrows)
          Object.defineProperty(out, k, {
            get() {
              throw new Sentinel(`getter ${k}`)
            },
            enumerable: true
          })
        else out[k] = build(f.v!)
      }
      return out
    }

    const counts = { runs: 0, success: 0, platformError: 0, callersOwn: 0 }
    await fc.assert(
      fc.asyncProperty(fc.array(request, { minLength: 1, maxLength: 4 }), async (rs) => {
        await Promise.all(
          rs.map(async (r) => {
            counts.runs++
            let effect: Effect.Effect<unknown, unknown>
            try {
              effect = (extension.execute as (x: unknown) => Effect.Effect<unknown, unknown>)(buildRequest(r))
            } catch (e) {
              if (e instanceof Sentinel) return void counts.callersOwn++
              throw new Error(`execute threw synchronously: ${String(e)}`)
            }
            const exit = await Effect.runPromiseExit(effect)
            if (Exit.isSuccess(exit)) return void counts.success++
            const error = Cause.findErrorOption(exit.cause)
            if (Option.isSome(error)) {
              expect((error.value as { _tag?: string })._tag).toBe("PlatformError")
              return void counts.platformError++
            }
            const defect = Cause.squash(exit.cause)
            expect(defect, Cause.pretty(exit.cause)).toBeInstanceOf(Sentinel)
            counts.callersOwn++
          })
        )
      }),
      { seed, numRuns }
    )
    extension.close()
    console.log(`Effect extension property (${strategy}, seed ${seed}, ${numRuns} runs): ${JSON.stringify(counts)}`)
    expect(counts.platformError).toBeGreaterThan(0)
    expect(counts.success).toBeGreaterThan(0)
    expect(openDescriptorCount()).toBe(before)
    expect(fs.readdirSync(w.s.outside)).toEqual(["secret.txt"])
    expect(fs.readFileSync(w.s.secret, "utf8")).toBe("TOP SECRET")
  }, 60_000)
})
