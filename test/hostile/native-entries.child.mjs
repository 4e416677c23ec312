// Hostile input against the addon's entries other than execute/batch (native-binding.child.mjs has
// those): readMany, call, identify, trips, close. In a child process, so a crash in the marshalling
// code fails the test instead of killing the runner. Arguments: seed numRuns. Prints one JSON line
// of figures; exits 1 with fast-check's report when the property fails.
//
// The values fight back: array members behind getters that throw, that close the handle, that
// detach or shrink the typed arrays already handed over, that make the paths array longer.
import fc from "fast-check"
import { loadAddon } from "../lifetime/addon.mjs"
import { fdCount, makeTree } from "../lifetime/tree.mjs"
import { expectNativeError, hostilePaths } from "../support/hostile.mjs"
import { promised } from "./promised.mjs"

const seed = Number(process.argv[2] ?? Date.now() % 2 ** 31)
const numRuns = Number(process.argv[3] ?? 200)
const native = loadAddon()
const OPS = Object.keys(native.ops).length
const tree = makeTree()

const pathSpec = hostilePaths({ more: ["dir//sub"], maxLength: 24 })
// How one paths[] member (or any argument) is given.
const memberSpec = fc.oneof(
  { weight: 6, arbitrary: pathSpec.map((s) => ({ s })) },
  { weight: 1, arbitrary: fc.constantFrom(0, -1, NaN, 2 ** 53).map((n) => ({ n })) },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom("undefined", "null", "symbol", "object", "bigint", "throws", "closes", "detachOps", "detachRecursive", "grows", "hole")
      .map((k) => ({ k }))
  }
)

let state // { handle, ops, recursive, paths } of the call being built

const detach = (view) => {
  // Transferring the buffer detaches it: the addon must not read through a pointer taken before.
  try {
    structuredClone(view.buffer, { transfer: [view.buffer] })
  } catch {
    /* already detached */
  }
}

const defineMember = (paths, i, spec) => {
  // A member whose read runs `get`: the addon reads it while it marshals the call.
  const onRead = (get) => {
    Object.defineProperty(paths, i, { get })
  }
  if ("s" in spec) {
    paths[i] = spec.s
    return
  }
  if ("n" in spec) {
    paths[i] = spec.n
    return
  }
  switch (spec.k) {
    case "undefined":
      paths[i] = undefined
      return
    case "null":
      paths[i] = null
      return
    case "symbol":
      paths[i] = Symbol("p")
      return
    case "object":
      paths[i] = { toString: () => "file.txt" }
      return
    case "bigint":
      paths[i] = 1n
      return
    case "hole":
      delete paths[i]
      return
    case "throws":
      return onRead(() => {
        throw new Error("member getter")
      })
    case "closes":
      return onRead(() => {
        state.handle.close()
        return "file.txt"
      })
    case "detachOps":
      return onRead(() => {
        detach(state.ops)
        return "file.txt"
      })
    case "detachRecursive":
      return onRead(() => {
        detach(state.recursive)
        return "dir"
      })
    case "grows":
      return onRead(() => {
        for (let k = 0; k < 1000; k++) paths.push("x")
        return "file.txt"
      })
  }
  throw new Error(`unknown spec ${JSON.stringify(spec)}`)
}

const opCode = fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 0, max: OPS - 1 }) }, fc.constantFrom(255, 254, OPS, 200))

const readManyCall = fc.record({
  members: fc.array(fc.record({ op: opCode, path: memberSpec, recursive: fc.integer({ min: 0, max: 2 }) }), { maxLength: 10 }),
  size: fc.oneof(
    { weight: 4, arbitrary: fc.constant(256) },
    fc.constantFrom(0, 1, 4, 1 << 20, (1 << 20) + 1, -1, 0.5, NaN),
    fc.integer({ min: 0, max: 12 })
  ),
  response: fc.oneof({ weight: 4, arbitrary: fc.constant(1 << 20) }, fc.constantFrom(0, 1, 5, 2 ** 53, 2 ** 54, -1, NaN)),
  verify: fc.constantFrom(true, false, undefined, 1),
  // Wrong shapes for the arrays themselves, sometimes.
  shape: fc.constantFrom("ok", "ok", "ok", "ok", "opsNotTyped", "int16", "pathsNotArray", "lengths", "missing")
})

const stats = { readMany: 0, call: 0, identify: 0, resolved: 0, rejected: 0, badArgument: 0, memberErrors: 0 }

const checkError = (e, what) => {
  expectNativeError(e, what)
  if (e.refusal === "badargument") stats.badArgument++
}

const runReadMany = async (strategy, c) => {
  const closing = JSON.stringify(c).includes("closes")
  const handle = closing ? await native.pin(tree.root, strategy) : handles[strategy]
  const n = c.members.length
  const ops = c.shape === "int16" ? new Int16Array(n) : new Uint8Array(n)
  const recursive = new Uint8Array(c.shape === "lengths" ? n + 1 : n)
  const paths = []
  state = { handle, ops, recursive, paths }
  c.members.forEach((m, i) => {
    ops[i] = m.op
    recursive[i] = m.recursive
    defineMember(paths, i, m.path)
  })
  paths.length = n
  const args =
    c.shape === "opsNotTyped"
      ? [Array.from(ops), paths, recursive]
      : c.shape === "pathsNotArray"
        ? [ops, { length: n }, recursive]
        : c.shape === "missing"
          ? [ops]
          : [ops, paths, recursive]
  stats.readMany++
  try {
    const out = await promised(() => handle.readMany(...args, c.size, c.response, c.verify), "readMany").then(
      (a) => a,
      (e) => {
        checkError(e, "readMany")
        return null
      }
    )
    if (out === null) {
      stats.rejected++
      return
    }
    stats.resolved++
    if (c.shape !== "ok") throw new Error(`readMany with shape '${c.shape}' was run`)
    if (
      !Array.isArray(out) ||
      out.length !== 2 ||
      !(out[0] instanceof Uint8Array) ||
      !Array.isArray(out[1]) ||
      out[0].length !== n ||
      out[1].length !== n
    ) {
      throw new Error(`readMany answered the wrong shape for ${n} members`)
    }
    for (let i = 0; i < n; i++) {
      if (out[0][i] === 1) {
        stats.memberErrors++
        checkError(out[1][i], `readMany member ${i}`)
      }
    }
  } finally {
    state = undefined
    if (closing) handle.close()
  }
}

const callArgs = fc.record({
  op: fc.oneof(
    { weight: 4, arbitrary: opCode },
    fc.constantFrom(-1, 1.5, NaN, Infinity, 2 ** 40).map((n) => n),
    memberSpec.map((s) => ({ spec: s }))
  ),
  path: memberSpec,
  recursive: fc.constantFrom(undefined, true, false, 1, "yes", null)
})

const runCall = async (strategy, c) => {
  const handle = handles[strategy]
  const holder = []
  state = { handle, ops: new Uint8Array(1), recursive: new Uint8Array(1), paths: holder }
  // "closes" would close the shared handle: the path is built as a plain value for call().
  const spec =
    "k" in c.path && ["throws", "closes", "detachOps", "detachRecursive", "grows", "hole"].includes(c.path.k) ? { s: "file.txt" } : c.path
  defineMember(holder, 0, spec)
  const op = typeof c.op === "number" ? c.op : "k" in c.op.spec ? null : (c.op.spec.s ?? c.op.spec.n)
  stats.call++
  await promised(() => handle.call(op, holder[0], c.recursive), "call").then(
    () => {
      stats.resolved++
    },
    (e) => {
      stats.rejected++
      checkError(e, "call")
    }
  )
  state = undefined
}

const tree2 = makeTree()
process.stdout.write("")
process.stderr.write("")
const fdBase = fdCount()
const handles = { openat2: await native.pin(tree.root, "openat2"), walk: await native.pin(tree.root, "walk") }

let failure
try {
  await fc.assert(
    fc.asyncProperty(fc.constantFrom("openat2", "walk"), readManyCall, fc.array(callArgs, { maxLength: 3 }), async (s, many, calls) => {
      await Promise.all([runReadMany(s, many), ...calls.map((c) => runCall(s, c))])
    }),
    { seed, numRuns, endOnFailure: true }
  )
} catch (e) {
  failure = e
}

// identify and pin with wrong types; trips with any receiver.
for (const bad of [undefined, null, 1, "", "relative", "/nonexistent/pinnedfs", "/\0", {}, Symbol("s"), tree2.root]) {
  try {
    stats.identify++
    await promised(() => native.identify(bad), "identify").then(
      (v) => {
        if (typeof v !== "string" || !/^[0-9]+:[0-9]+$/.test(v)) throw new Error(`identify answered ${String(v)}`)
      },
      (e) => checkError(e, "identify")
    )
  } catch (e) {
    failure ??= e
  }
}
try {
  // A test hook: a published prebuild has none.
  if (native.testHooks) {
    if (typeof native.trips() !== "number") failure ??= new Error("trips() is not a number")
    native.trips.call(undefined, 1, 2)
  } else if (native.trips !== undefined) failure ??= new Error("trips() in a build without test hooks")
} catch (e) {
  failure ??= e
}
// Wrong receivers for the handle's methods, and a closed handle: no crash.
for (const h of Object.values(handles)) {
  for (const self of [{}, null, undefined, 1, "x"]) {
    try {
      await h.readMany.call(self, new Uint8Array(0), [], new Uint8Array(0), 1, 1)
    } catch {
      /* a TypeError is fine */
    }
    try {
      await h.call.call(self, 0, "file.txt")
    } catch {
      /* idem */
    }
    try {
      h.close.call(self)
    } catch {
      /* idem */
    }
  }
  h.close()
  for (const [what, f] of [
    ["readMany", () => h.readMany(new Uint8Array([0]), ["file.txt"], new Uint8Array(1), 1, 1)],
    ["call", () => h.call(0, "file.txt")]
  ]) {
    const e = await promised(f, what).then(
      () => null,
      (x) => x
    )
    if (e?.refusal !== "badargument") failure ??= new Error(`a closed handle's ${what} did not answer BadArgument`)
  }
}

globalThis.gc?.()
const fdAfter = fdCount()
const secretIntact = tree.secretIntact()
tree.dispose()
tree2.dispose()
console.log(JSON.stringify({ seed, numRuns, ...stats, fdBase, fdAfter, secretIntact }))
if (failure) {
  console.error(failure instanceof Error ? failure.message : String(failure))
  process.exit(1)
}
if (fdAfter !== fdBase) {
  console.error(`descriptors: ${fdBase} before, ${fdAfter} after`)
  process.exit(1)
}
if (!secretIntact) {
  console.error("the outside directory changed")
  process.exit(1)
}
