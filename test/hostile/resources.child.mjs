// Resource exhaustion, in a child process that runs under a real limit set with prlimit(1)
// (RLIMIT_NOFILE or RLIMIT_AS) once its modules are loaded (Node's module loader itself needs more
// than the limits leave): the child must live, and every failure must be typed. Arguments:
// transpiled-sources-dir strategy limit scenario workspace [more], limit a prlimit option such as
// "--nofile=64", or "--as=+N": N bytes of address space more than the child holds once loaded (what
// a Node reserves at start moves between versions: about 750 MB on Node 22, 1.3 GB on 24 and 26, so
// an absolute limit that leaves one line room leaves another none). Prints one JSON line.
//
//   remove     `remove("t", { recursive: true })` of a wide tree through PinnedRoot and through the
//              extension, with few descriptors: done, or a typed resource error; never an escape
//   glob       `glob(pattern)` through PinnedRoot and through the extension's execute: the answer or
//              its typed error (more: the pattern, read from a file)
//   reads      a readFile of every sparse file big-* at once, through PinnedRoot and through the
//              extension: each the content or a typed error (more: the content budget to set
//              first, or "default")
//   batch      one batch of every big-*, whose contents add up past what the address space holds,
//              through PinnedRoot and through the extension: each member the content or a typed
//              error (more: as for reads)
import { Cause, Effect, Exit } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const [transpiled, strategy, limit, scenario, workspace, more] = process.argv.slice(2)
const { PinnedRoot, contentBudget } = await import(path.join(transpiled, "index.js"))
const { NodeAtomicFileSystem } = await import(path.join(transpiled, "effect", "index.js"))
// Everything the scenarios import, loaded before the limit applies.
await import(path.join(transpiled, "effect", "single.js"))
await import(path.join(transpiled, "effect", "batch.js"))
const relative = /^--as=\+(\d+)$/.exec(limit)
const held = () => Number(/^VmSize:\s+(\d+) kB$/m.exec(fs.readFileSync("/proc/self/status", "utf8"))[1]) * 1024
const option = relative ? `--as=${held() + Number(relative[1])}` : limit
const limited = spawnSync("prlimit", ["--pid", String(process.pid), option], { encoding: "utf8" })
if (limited.status !== 0) {
  console.error(`prlimit ${option} failed: ${limited.stderr}`)
  process.exit(3)
}
const limits = fs.readFileSync("/proc/self/limits", "utf8")

/** What an error says, in the fields every entry shares. */
const describe = (e) => {
  if (e && typeof e === "object" && typeof e.code === "string") {
    return { code: e.code, refusal: e.refusal ?? "", reason: e.reason ?? "", description: e.description ?? e.message }
  }
  const cause = e?.cause ?? e?.reason?.cause
  if (cause && typeof cause.code === "string") {
    return { code: cause.code, refusal: cause.refusal ?? "", reason: e?.reason?._tag ?? "", description: cause.description ?? "" }
  }
  return { code: "untyped", refusal: "", reason: "", description: String(e) }
}
const settle = async (f) => {
  try {
    const v = await f()
    return { ok: true, value: v }
  } catch (e) {
    return { ok: false, error: describe(e) }
  }
}

const boundaryRoot = fs.realpathSync(workspace)
// The identity as the executor spells it (with the birth time or generation), as a kernel gets it.
const rootIdentity = await Effect.runPromise(NodeAtomicFileSystem.make({ strategy }).identifyRoot(boundaryRoot))
const roots = { boundaryRoot, logicalRoot: boundaryRoot, rootIdentity }
const extension = () => NodeAtomicFileSystem.make({ strategy, contentLimit: 2 ** 31 - 1, batchLimits: { response: 2 ** 31 } })
const run = async (ext, request) => {
  const exit = await Effect.runPromiseExit(ext.execute({ ...roots, ...request }))
  if (Exit.isSuccess(exit)) return { ok: true, value: exit.value }
  const failure = Cause.findErrorOption(exit.cause)
  return failure._tag === "Some"
    ? { ok: false, error: describe(failure.value) }
    : { ok: false, error: { code: "defect", description: Cause.pretty(exit.cause).slice(0, 400) } }
}
const size = (v) => v?.byteLength ?? v?.length

let result
if (scenario === "remove") {
  const entry = more
  const out = {}
  if (entry === "PinnedRoot") {
    const pinned = await PinnedRoot.open(workspace, { strategy })
    out.first = await settle(() => pinned.remove("t", { recursive: true }))
    pinned.close()
  } else {
    const ext = extension()
    out.first = await run(ext, { operation: "remove", path: `${boundaryRoot}/t`, options: { recursive: true } })
    ext.close()
  }
  out.left = fs.existsSync(path.join(workspace, "t"))
  result = out
} else if (scenario === "glob") {
  const pattern = fs.readFileSync(more, "utf8")
  const out = {}
  const pinned = await PinnedRoot.open(workspace, { strategy })
  const g = await settle(() => pinned.glob(pattern))
  out.PinnedRoot = g.ok ? { ok: true, count: g.value.length } : g
  pinned.close()
  const ext = extension()
  const e = await run(ext, { operation: "glob", pattern: `${boundaryRoot}/${pattern}`, root: boundaryRoot })
  out.extension = e.ok ? { ok: true, count: e.value.length } : e
  ext.close()
  result = out
} else if (scenario === "reads" || scenario === "batch") {
  if (more !== "default") contentBudget(Number(more))
  const names = fs.readdirSync(workspace).filter((n) => n.startsWith("big-"))
  const member = (r) => (r.ok ? { ok: true, value: size(r.value) } : { ok: false, error: describe(r.error) })
  const pinned = await PinnedRoot.open(workspace, { strategy, readLimit: 2 ** 31 - 1 })
  const ext = extension()
  if (scenario === "reads") {
    const direct = await Promise.all(names.map((n) => settle(() => pinned.readFile(n).then(size))))
    const viaExtension = await Promise.all(
      names.map((n) =>
        run(ext, { operation: "readFile", path: `${boundaryRoot}/${n}` }).then((r) => (r.ok ? { ok: true, value: size(r.value) } : r))
      )
    )
    result = { PinnedRoot: direct, extension: viaExtension }
  } else {
    const answer = await settle(() =>
      pinned.batch(
        names.map((n) => ({ operation: "readFile", path: n })),
        { response: 2 ** 31 }
      )
    )
    const viaExtension = await run(ext, {
      operation: "batch",
      requests: names.map((n) => ({ operation: "readFile", path: `${boundaryRoot}/${n}` }))
    })
    result = {
      PinnedRoot: answer.ok ? answer.value.map(member) : [answer],
      extension: viaExtension.ok
        ? viaExtension.value.entries.map((e) =>
            e.result._tag === "Success"
              ? { ok: true, value: size(e.result.success.value) }
              : { ok: false, error: describe(e.result.failure) }
          )
        : [viaExtension]
    }
  }
  pinned.close()
  ext.close()
  result.inFlight = contentBudget().inFlight
} else {
  console.error(`unknown scenario '${scenario}'`)
  process.exit(2)
}
result.limits = limits
  .split("\n")
  .filter((l) => /open files|address space/.test(l))
  .map((l) => l.replace(/ +/g, " "))
console.log(JSON.stringify(result))
