/**
 * Hostile input against every `PinnedRoot` method: arbitrary argument values (wrong types, NUL
 * bytes, 100 KB paths, 10,000 components, huge and negative modes and ids, BigInts, Symbols,
 * Proxies, objects whose getters throw, arrays, polluted prototypes, over-limit batches). Each call
 * must settle: with a value, with a PinnedFsError of a known reason (BadArgument when the input is
 * malformed by type), or with the very error the caller's own getter threw, and never by throwing
 * synchronously out of an async method. Afterwards descriptors are back at their baseline and the
 * outside directory is untouched.
 */
import fc from "fast-check"
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { PinnedFsError, PinnedRoot } from "../../src/index.ts"
import { strategies } from "../support/strategies.ts"
import { openDescriptorCount, scratch } from "../support/tree.ts"
import { executorOperations } from "../../src/protocol/operations.ts"
import { buildHostile, buildHostilePath, type HostileSpec, hostilePaths, hostileSpec } from "../support/hostile.mjs"

const seed = Number(process.env.PINNEDFS_SEED ?? 20261130)
const numRuns = Number(process.env.PINNEDFS_RUNS ?? 400)

const REASONS = new Set([
  "AlreadyExists",
  "BadArgument",
  "BadResource",
  "Busy",
  "InvalidData",
  "NotFound",
  "PermissionDenied",
  "TimedOut",
  "UnexpectedEof",
  "Unknown",
  "WouldBlock",
  "WriteZero"
])

/** What our own getters and traps throw: a rejection with it is the caller's error coming back. */
class Sentinel extends Error {}

const pathSpec = hostilePaths({
  more: ["dir/../../x", "new", "new/a/b", "dir/", ".", ".."],
  maxLength: 30,
  binary: 12,
  large: ["BIG", "COMPONENTS"]
})

/** Plain-data descriptions of hostile values (test/support/hostile.mjs), and this suite's own kinds. */
type Spec = HostileSpec
const kinds: Record<string, () => unknown> = {
  fn: () => () => "file.txt",
  object: () => ({ path: "file.txt", operation: "readFile", toString: () => "file.txt" }),
  throws: () =>
    new Proxy(
      {},
      {
        get: () => {
          throw new Sentinel("trap")
        }
      }
    ),
  proxy: () =>
    new Proxy(
      { path: "file.txt" },
      {
        getPrototypeOf: () => {
          throw new Sentinel("trap")
        }
      }
    ),
  flagX: () => ({ flag: "wx", mode: 0o600 }),
  flagWx: () => ({ flag: "zz" }),
  atomic: () => ({ atomic: true, flag: "a" }),
  recursive: () => ({ recursive: true, force: true }),
  hugeArray: () => new Array(100_000).fill({ operation: "exists", path: "file.txt" }),
  polluted: () => Object.create({ path: "out/secret.txt", operation: "readFile", recursive: true })
}
const spec: fc.Arbitrary<Spec> = hostileSpec({ paths: pathSpec, kinds: Object.keys(kinds) })
const build = (v: Spec): unknown => buildHostile(v, { path: buildHostilePath, kinds })

/** Usually a well-typed path first, so the later (options, data, mode) arguments get read too. */
const args: fc.Arbitrary<Array<Spec>> = fc
  .tuple(
    fc.oneof({ weight: 3, arbitrary: pathSpec.map((s): Spec => ({ s })) }, { weight: 1, arbitrary: spec }),
    fc.array(spec, { maxLength: 3 })
  )
  .map(([first, rest]) => [first, ...rest])

// PinnedRoot has one method per executor operation, under the same name.
const METHODS = executorOperations

/** Whether the first argument alone makes the call malformed by type (so BadArgument is owed). */
const firstIsNotString = (m: (typeof METHODS)[number], first: unknown) =>
  !["mkdirs", "rmdirs", "batch"].includes(m) && typeof first !== "string"

describe.each(strategies)("PinnedRoot under hostile arguments (%s)", (strategy) => {
  it("settles every call with a value or a typed error", async () => {
    const s = scratch()
    s.make({ "file.txt": "hello", "dir/sub/deep.txt": "deep", "hard.txt": "h" })
    fs.symlinkSync(s.outside, s.abs("out"))
    fs.linkSync(s.abs("hard.txt"), s.abs("dir/hard2.txt"))
    const before = openDescriptorCount()
    const root = await PinnedRoot.open(s.root, { strategy })
    const counts = { calls: 0, resolved: 0, typed: 0, badArgument: 0, callersOwn: 0 }
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ method: fc.constantFrom(...METHODS), args: args }), {
          minLength: 1,
          maxLength: 5
        }),
        async (calls) => {
          // Concurrently, as a busy caller would.
          await Promise.all(
            calls.map(async ({ method, args }) => {
              const built = args.map(build)
              counts.calls++
              let p: unknown
              try {
                p = (root[method] as (...a: Array<unknown>) => unknown)(...built)
              } catch (e) {
                throw new Error(`${method} threw synchronously: ${String(e)}`)
              }
              expect(p).toBeInstanceOf(Promise)
              const e = await (p as Promise<unknown>).then(
                () => undefined,
                (x: unknown) => x ?? null
              )
              if (e === undefined) return void counts.resolved++
              if (e instanceof Sentinel) return void counts.callersOwn++
              expect(e).toBeInstanceOf(PinnedFsError)
              const err = e as PinnedFsError
              expect(REASONS.has(err.reason), `${method}: reason ${err.reason}`).toBe(true)
              counts.typed++
              if (err.reason === "BadArgument") counts.badArgument++
              if (firstIsNotString(method, built[0])) expect(err.reason, `${method}(${typeof built[0]})`).toBe("BadArgument")
            })
          )
        }
      ),
      { seed, numRuns }
    )
    // Every method with no arguments, and with a well-typed path followed by a Proxy whose every
    // read throws: the caller's own error comes back as the rejection, or a typed error does.
    const trap = build({ k: "throws" })
    for (const method of METHODS) {
      const f = root[method] as (...a: Array<unknown>) => Promise<unknown>
      for (const argv of [[], ["file.txt", trap], ["file.txt", "x", trap], [[trap]], [trap]]) {
        const e = await f.apply(root, argv).then(
          () => undefined,
          (x: unknown) => x
        )
        if (e === undefined) continue
        if (e instanceof Sentinel) counts.callersOwn++
        else expect(e, `${method}(${argv.length} args)`).toBeInstanceOf(PinnedFsError)
      }
    }
    // Over-limit batches are refused whole, before anything runs.
    const over = await root.batch(new Array(300).fill({ operation: "exists", path: "file.txt" })).catch((x: unknown) => x)
    expect((over as PinnedFsError).reason).toBe("BadArgument")
    const small = await root.batch([{ operation: "exists", path: "file.txt" }], { size: 0 }).catch((x: unknown) => x)
    expect((small as PinnedFsError).reason).toBe("BadArgument")
    root.close()
    console.log(`PinnedRoot property (${strategy}, seed ${seed}, ${numRuns} runs): ${JSON.stringify(counts)}`)
    expect(counts.typed).toBeGreaterThan(0)
    expect(counts.callersOwn).toBeGreaterThan(0)
    expect(counts.resolved).toBeGreaterThan(0)
    expect(openDescriptorCount()).toBe(before)
    expect(fs.readdirSync(s.outside)).toEqual(["secret.txt"])
    expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
  }, 60_000)
})
