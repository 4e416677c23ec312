// Property test of the raw addon, run in a child process so that a crash in the marshalling code
// (native/binding) fails the test instead of killing the runner. Arguments: seed numRuns.
// Prints one JSON line with the figures; exits 1 with fast-check's report (seed, path,
// counterexample) when the property fails.
//
// Inputs are generated as plain-data descriptions and built into hostile values inside the
// property, so a counterexample prints readably even when the value is a Proxy or a throwing getter.
import fc from "fast-check"
import * as fs from "node:fs"
import { loadAddon } from "../lifetime/addon.mjs"
import { fdCount, makeTree } from "../lifetime/tree.mjs"
import { buildHostile, buildHostilePath, expectNativeError, hostilePaths, hostileSpec, throwingGetter } from "../support/hostile.mjs"
import { promised as call } from "./promised.mjs"

const seed = Number(process.argv[2] ?? Date.now() % 2 ** 31)
const numRuns = Number(process.argv[3] ?? 200)
const native = loadAddon()
const OPS = Object.keys(native.ops).length

// ---- hostile values ------------------------------------------------------------------------

const path = hostilePaths({
  more: ["inner-link", "dir/hard2.txt", "dir/../../x", "new", "new/a", "dir/", ".", "..", "\0", "dir//sub///deep.txt"],
  maxLength: 40,
  binary: 20,
  others: [fc.array(fc.constantFrom("a", "..", ".", "dir", "sub", "out", "\0", "new"), { maxLength: 8 }).map((a) => a.join("/"))],
  large: ["BIG", "COMPONENTS", "LONGNAME"]
})

let current // the handle a "closes" getter closes mid-marshalling

// This suite's own kinds, beside the shared ones (test/support/hostile.mjs): values that fight the
// marshalling (a getter that closes the handle or grows the array being read) and directory
// programs, well-formed and not.
const kinds = {
  fn: () => () => "x",
  object: () => ({ path: "file.txt", toString: () => "file.txt" }),
  throws: () => throwingGetter("path", () => new Error("getter")),
  proxy: () =>
    new Proxy(
      {},
      {
        get() {
          throw new Error("trap")
        },
        has() {
          throw new Error("trap")
        }
      }
    ),
  closes: () =>
    Object.defineProperty([], 0, {
      get() {
        current?.close()
        return "x"
      }
    }),
  // An array whose member getter makes the array longer while the addon walks it.
  grows: () => {
    const a = ["a", "b"]
    Object.defineProperty(a, 0, {
      get() {
        for (let i = 0; i < 1000; i++) a.push("x")
        return "a"
      }
    })
    return a
  },
  hugeArray: () => new Array(200_000).fill("a"),
  plan: () => [{ path: "new/p" }, { path: "new/p/q", mode: 0o700 }],
  owned: () => [{ path: "new/p", identity: "1:2", optional: true }],
  badowned: () => [
    { path: "x", identity: "-1:+2" },
    { path: "y", identity: "99999999999999999999999:1" }
  ]
}
// A value spec: plain data naming what to build.
const value = hostileSpec({ paths: path, kinds: Object.keys(kinds) })
const build = (v) => buildHostile(v, { path: buildHostilePath, kinds })

const FIELDS = [
  "path",
  "to",
  "pattern",
  "exclude",
  "dot",
  "recursive",
  "force",
  "atomic",
  "mode",
  "uid",
  "gid",
  "flag",
  "maxBytes",
  "data",
  "plan",
  "owned",
  "testAfterPlan"
]

// Values of the right type for each operand, so that well-formed requests reach the operations.
const sane = {
  path: path.map((s) => ({ s })),
  to: path.map((s) => ({ s })),
  pattern: fc.constantFrom("*", "**", "**/*.txt", "{a,b}", "[").map((s) => ({ s })),
  exclude: fc.constant({ k: "strings" }),
  dot: fc.constantFrom({ k: "true" }, { k: "false" }),
  recursive: fc.constantFrom({ k: "true" }, { k: "false" }),
  force: fc.constantFrom({ k: "true" }, { k: "false" }),
  atomic: fc.constantFrom({ k: "true" }, { k: "false" }),
  mode: fc.integer({ min: 0, max: 0o7777 }).map((n) => ({ n })),
  uid: fc.integer({ min: -1, max: 70000 }).map((n) => ({ n })),
  gid: fc.integer({ min: -1, max: 70000 }).map((n) => ({ n })),
  flag: fc.integer({ min: 0, max: 9 }).map((n) => ({ n })),
  maxBytes: fc.nat().map((n) => ({ n })),
  data: fc.oneof(
    path.map((s) => ({ s })),
    fc.constant({ k: "uint8" })
  ),
  plan: fc.constant({ k: "plan" }),
  owned: fc.constant({ k: "owned" }),
  testAfterPlan: fc.constant({ k: "array" })
}

// How a field is present: a value, a getter that throws, a getter that closes the root.
const field = fc.oneof(
  { weight: 6, arbitrary: value.map((v) => ({ v })) },
  { weight: 1, arbitrary: fc.constant({ getterThrows: true }) },
  { weight: 1, arbitrary: fc.constant({ getterCloses: true }) }
)

const op = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0, max: OPS - 1 }).map((n) => ({ v: { n } })) },
  { weight: 1, arbitrary: fc.constantFrom(-1, OPS, 2 ** 31, 1.5, NaN).map((n) => ({ v: { n } })) },
  { weight: 1, arbitrary: field }
)

const request = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      op,
      // Operands of the right type, then a few hostile ones on top (often none).
      fields: fc
        .tuple(
          fc.record(sane, { requiredKeys: [] }),
          fc.option(fc.dictionary(fc.constantFrom(...FIELDS), field, { minKeys: 1, maxKeys: 2 }), { freq: 2 })
        )
        .map(([ok, hostile]) => ({ ...Object.fromEntries(Object.entries(ok).map(([k, v]) => [k, { v }])), ...(hostile ?? {}) })),
      proto: fc.boolean()
    })
  },
  { weight: 1, arbitrary: value.map((whole) => ({ whole })) }
)

const isValidOp = (o) => o && "v" in o && "n" in o.v && Number.isInteger(o.v.n) && o.v.n >= 0 && o.v.n < OPS

const defineField = (target, key, f) => {
  if ("v" in f) target[key] = build(f.v)
  else if (f.getterThrows)
    Object.defineProperty(target, key, {
      get() {
        throw new Error(`getter ${key}`)
      },
      enumerable: true
    })
  else
    Object.defineProperty(target, key, {
      get() {
        current?.close()
        return key === "op" ? 0 : "file.txt"
      },
      enumerable: true
    })
}

const buildRequest = (spec) => {
  if ("whole" in spec) return build(spec.whole)
  // With `proto`, operands come through the prototype chain: a polluted prototype must be read
  // the same as own properties (and still be validated).
  const own = {}
  const target = spec.proto ? Object.create(own) : own
  defineField(own, "op", spec.op)
  for (const [k, f] of Object.entries(spec.fields)) defineField(own, k, f)
  return target
}

// A request that cannot be valid, whatever the file system says.
const surelyMalformed = (spec) => {
  if ("whole" in spec) return true
  if (!isValidOp(spec.op)) return true
  return Object.entries(spec.fields).some(([k, f]) => f.getterThrows && readsOperand(spec.op.v.n, k))
}

// Which operands the addon reads for an operation (the others are never touched, getters and all).
const readsOperand = (op, key) => {
  if (key === "to") return op === native.ops.rename || op === native.ops.glob
  if (key === "pattern" || key === "exclude" || key === "dot") return op === native.ops.glob
  // A build without the test hooks never reads it.
  if (key === "testAfterPlan") return op === native.ops.mkdirs && native.testHooks
  return true
}

// ---- checks --------------------------------------------------------------------------------

const stats = { executes: 0, batches: 0, resolved: 0, rejected: 0, badArgument: 0, memberErrors: 0 }

const checkError = (e, malformed, what) => {
  expectNativeError(e, what)
  if (e.refusal === "badargument") stats.badArgument++
  if (malformed && e.refusal !== "badargument" && !(e.code === "EBADF" && e.description === "root is closed")) {
    throw new Error(`${what}: malformed input answered ${e.code}/${e.refusal} (${e.description}), not BadArgument`)
  }
}

const tree = makeTree()
// The first write to a piped stdout/stderr makes libuv open /dev/null (its spare descriptor): do it
// before the baseline so only our descriptors are counted.
process.stdout.write("")
process.stderr.write("")
const fdBase = fdCount()
const fdNames = () =>
  fs.readdirSync("/proc/self/fd").map((n) => {
    try {
      return `${n}:${fs.readlinkSync(`/proc/self/fd/${n}`)}`
    } catch {
      return n
    }
  })
const handles = {
  openat2: await native.pin(tree.root, "openat2"),
  walk: await native.pin(tree.root, "walk")
}

const runExecute = async (strategy, spec, verify) => {
  // A fresh handle when the request may close it, so the shared ones stay open.
  const closing = JSON.stringify(spec).includes("Closes") || JSON.stringify(spec).includes("closes")
  const h = closing ? await native.pin(tree.root, strategy) : handles[strategy]
  current = h
  stats.executes++
  try {
    const out = await call(() => h.execute(buildRequest(spec), verify), "execute").then(
      () => "resolved",
      (e) => {
        checkError(e, surelyMalformed(spec), "execute")
        return "rejected"
      }
    )
    stats[out]++
  } finally {
    current = undefined
    if (closing) h.close()
  }
}

const runBatch = async (strategy, specs, limits, verify) => {
  const closing = JSON.stringify(specs).includes("loses")
  const h = closing ? await native.pin(tree.root, strategy) : handles[strategy]
  current = h
  stats.batches++
  const size = limits?.size ?? 256
  const overLimit = Number.isInteger(size) && size >= 0 && specs.length > size
  try {
    const out = await call(() => h.batch(specs.map(buildRequest), limits, verify), "batch").then(
      (members) => members,
      (e) => {
        checkError(e, overLimit, "batch")
        return null
      }
    )
    if (out === null) return
    if (overLimit) throw new Error(`batch of ${specs.length} over a limit of ${size} was run`)
    if (!Array.isArray(out) || out.length !== specs.length) throw new Error("batch answer has the wrong length")
    out.forEach((m, i) => {
      if (m.ok === true) return
      if (m.ok !== false) throw new Error("batch member is neither ok nor failed")
      stats.memberErrors++
      checkError(m.error, surelyMalformed(specs[i]), `batch member ${i}`)
    })
  } finally {
    current = undefined
    if (closing) h.close()
  }
}

const limits = fc.oneof(
  fc.constant(undefined),
  fc.record({ size: fc.integer({ min: 0, max: 8 }), response: fc.integer({ min: 0, max: 1 << 20 }) }),
  value.map((v) => ({ spec: v }))
)

const strategy = fc.constantFrom("openat2", "walk")
let failure
try {
  await fc.assert(
    fc.asyncProperty(
      strategy,
      fc.array(request, { minLength: 1, maxLength: 4 }),
      fc.array(request, { maxLength: 10 }),
      limits,
      fc.boolean(),
      async (s, singles, members, l, verify) => {
        // The single requests run concurrently, alongside the batch: work in flight overlaps.
        await Promise.all([
          ...singles.map((r) => runExecute(s, r, verify)),
          (async () => {
            if (l && "spec" in l) {
              // Hostile limits (not read unless an object): an empty batch answers [] or BadArgument.
              stats.batches++
              await call(() => handles[s].batch([], build(l.spec), verify), "batch").then(
                (a) => {
                  if (!Array.isArray(a) || a.length !== 0) throw new Error("an empty batch answered members")
                },
                (e) => checkError(e, true, "batch limits")
              )
              return
            }
            const built = l
            await runBatch(s, members, built, verify)
          })()
        ])
      }
    ),
    { seed, numRuns, endOnFailure: true }
  )
} catch (e) {
  failure = e
}

// Hostile batch arrays: members behind getters that throw, that close the handle, that make the
// array longer while the addon walks it. Every member gets an answer, or the batch a BadArgument.
const fresh = makeTree()
try {
  const h = await native.pin(fresh.root, "walk")
  const throwing = [
    { op: 0, path: "file.txt" },
    { op: 0, path: "x" }
  ]
  Object.defineProperty(throwing, 1, {
    get() {
      throw new Error("member getter")
    }
  })
  const a = await call(() => h.batch(throwing, { size: 8, response: 1 << 20 }), "batch")
  if (a.length !== 2 || a[0].ok !== true || a[1].ok !== false || a[1].error.refusal !== "badargument") {
    throw new Error(`a throwing member getter answered ${JSON.stringify(a)}`)
  }
  const growing = [
    { op: 0, path: "file.txt" },
    { op: 0, path: "file.txt" }
  ]
  Object.defineProperty(growing, 0, {
    get() {
      for (let i = 0; i < 10_000; i++) growing.push({ op: 0, path: "file.txt" })
      return { op: 0, path: "file.txt" }
    }
  })
  const g = await call(() => h.batch(growing, { size: 8, response: 1 << 20 }), "batch")
  if (g.length !== 2) throw new Error(`a growing batch answered ${g.length} members for the 2 it had`)
  const closing = [{ op: 0, path: "file.txt" }]
  Object.defineProperty(closing, 0, {
    get() {
      h.close()
      return { op: 0, path: "file.txt" }
    }
  })
  const c = await call(() => h.batch(closing), "batch").then(
    () => null,
    (e) => e
  )
  if (c?.refusal !== "badargument") throw new Error("a batch whose member getter closed the handle was run")
  const polluted = await (async () => {
    // A tree the property above has not rearranged: "out" is still the link out.
    const h2 = await native.pin(fresh.root, "walk")
    Object.prototype.path = "out/secret.txt"
    try {
      return await call(() => h2.execute({ op: native.ops.readFile }), "execute").then(
        () => "read",
        (e) => e.refusal
      )
    } finally {
      delete Object.prototype.path
      h2.close()
    }
  })()
  if (polluted !== "symlink") throw new Error(`a path from a polluted prototype answered ${polluted}`)
} catch (e) {
  failure ??= e
}
fresh.dispose()

// Wrong receivers and a closed handle: no crash, and a closed handle answers BadArgument.
for (const h of Object.values(handles)) {
  for (const self of [{}, null, undefined, 1, "x"]) {
    try {
      await h.execute.call(self, { op: 0, path: "file.txt" })
    } catch {
      /* a TypeError is fine; a crash is not */
    }
    try {
      await h.batch.call(self, [])
    } catch {
      /* idem */
    }
  }
  try {
    new h.constructor()
  } catch {
    /* idem */
  }
  h.close()
  h.close()
  const e = await h.execute({ op: 0, path: "file.txt" }).then(
    () => null,
    (x) => x
  )
  if (e?.refusal !== "badargument") failure ??= new Error("a closed handle did not answer BadArgument")
}
for (const bad of [undefined, null, 1, "", "/nonexistent/pinnedfs", {}, Symbol("s")]) {
  for (const strat of [undefined, "walk", "bogus", 7, {}]) {
    try {
      const h = await call(() => native.pin(bad, strat), "pin").catch((e) => {
        checkError(e, false, "pin")
        return null
      })
      h?.close()
    } catch (e) {
      failure ??= e
    }
  }
}

globalThis.gc?.()
const fdAfter = fdCount()
const secretIntact = tree.secretIntact()
tree.dispose()
console.log(JSON.stringify({ seed, numRuns, ...stats, fdBase, fdAfter, secretIntact }))
if (failure) {
  console.error(failure instanceof Error ? failure.message : String(failure))
  if (failure instanceof Error && failure.cause) console.error("cause:", failure.cause)
  process.exit(1)
}
if (fdAfter !== fdBase) {
  console.error(`descriptors: ${fdBase} before, ${fdAfter} after: ${JSON.stringify(fdNames())}`)
  process.exit(1)
}
if (!secretIntact) {
  console.error("the outside directory changed")
  process.exit(1)
}
