// The dev pipeline's authoritative re-read: 1,000 files re-read after a fixer changed some of
// them, through pinnedfs/dev's re-read (one PinnedRoot.batch trip for the contents) against the
// same envelope re-read with node:fs/promises (one readFile per file, concurrently), both feeding
// the same workspace with the same admission rules (UTF-8, no NUL, size limit).
//
// Two envelopes: the files named outright (a step's selectors: nothing to list) and a scope glob
// (listed first: pinnedfs's native glob, node's recursive readdir filtered by picomatch).
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import picomatch from "picomatch"

const dist = new URL("../../dist/", import.meta.url)
const load = (rel) => import(new URL(rel, dist).href)

const FILES = 1000
const FIXED_PER_RUN = 100
const DIR = "reread"
const SCOPE = `${DIR}/src/**/*.ts`
const paths = Array.from({ length: FILES }, (_, i) => `${DIR}/src/m${i % 20}/f${String(i).padStart(4, "0")}.ts`)
const source = (i, n) =>
  `// module ${i}, revision ${n}\n` +
  Array.from({ length: 40 }, (_, k) => `export const value${k} = ${i * 100 + k} // a line of about fifty bytes\n`).join("")

// The tree is made once per benchmark run, the first time a contender needs it.
const made = new Set()
const ensureTree = (root) => {
  if (made.has(root)) return
  for (const [i, p] of paths.entries()) {
    fs.mkdirSync(path.dirname(path.join(root, p)), { recursive: true })
    fs.writeFileSync(path.join(root, p), source(i, 0))
  }
  made.add(root)
}

// What the fixer did between two re-reads (not timed): rewrote a tenth of the files.
let revision = 0
const fixer = (root) => {
  revision++
  for (let k = 0; k < FIXED_PER_RUN; k++) {
    const i = (revision * 37 + k * 10) % FILES
    fs.writeFileSync(path.join(root, paths[i]), source(i, revision))
  }
}

/** pinnedfs/dev's own re-read over a pinned root. */
export const rereadPinned = (root, pinned) => {
  let state
  const init = async () => {
    ensureTree(root)
    const dev = await load("dev/index.js")
    const { envelopeOf } = await load("dev/envelope.js")
    const { reread } = await load("dev/reread.js")
    const ws = await dev.acquire(pinned, { scope: [SCOPE] })
    if (ws.paths().length !== FILES) throw new Error(`acquired ${ws.paths().length} files, expected ${FILES}`)
    const limits = { ...dev.defaultLimits }
    const envelopes = {
      named: envelopeOf({ name: "bench", scope: [SCOPE], selectors: paths, mayCreate: [] }),
      scope: envelopeOf({ name: "bench", scope: [SCOPE], mayCreate: [] })
    }
    const snapshot = new Set(paths)
    return {
      ws,
      run: (kind) =>
        reread(pinned, ws, {
          envelope: envelopes[kind],
          snapshot,
          withheld: new Set(),
          extra: [],
          mayCreate: () => false,
          source: "bench",
          limits
        })
    }
  }
  return async (kind) => {
    state ??= await init()
    const report = await state.run(kind)
    if (report.paths.length !== FILES) throw new Error(`re-read ${report.paths.length} files, expected ${FILES}`)
  }
}

/** The same envelope re-read with node:fs/promises into the same kind of workspace. */
export const rereadNode = (root) => {
  let state
  const init = async () => {
    ensureTree(root)
    const dev = await load("dev/index.js")
    const { admitBytes } = await load("dev/readTexts.js")
    const pinned = await (await load("index.js")).PinnedRoot.open(root)
    const ws = await dev.acquire(pinned, { scope: [SCOPE] })
    pinned.close()
    const matches = picomatch(SCOPE, { dot: true })
    const list = async () =>
      (await fsp.readdir(path.join(root, DIR), { recursive: true })).map((p) => `${DIR}/${p}`).filter((p) => matches(p))
    const max = dev.defaultLimits.maxFileBytes
    const run = async (kind) => {
      const envelope = kind === "named" ? paths : await list()
      const outcomes = await Promise.all(
        envelope.map((p) =>
          fsp.readFile(path.join(root, p)).then(
            (bytes) => admitBytes(bytes, max),
            (e) => (e.code === "ENOENT" ? { kind: "absent" } : { kind: "unreadable", reason: e.message })
          )
        )
      )
      let read = 0
      envelope.forEach((p, i) => {
        const o = outcomes[i]
        if (o.kind === "text") ws.admit(p, o.text)
        else if (o.kind === "absent") ws.drop(p)
        read++
      })
      return read
    }
    return { run }
  }
  return async (kind) => {
    state ??= await init()
    const read = await state.run(kind)
    if (read !== FILES) throw new Error(`re-read ${read} files, expected ${FILES}`)
  }
}

/** A re-read of all FILES after the fixer ran, the envelope naming them (`named`) or globbing them (`scope`). */
const rereadScenario = (kind, title) => ({
  id: `reread-1000-${kind}`,
  title,
  needs: "rereadEnvelope",
  ops: FILES,
  rounds: 5,
  minMs: 300,
  unit: (c, trees) => ({
    before: () => {
      ensureTree(trees.root)
      fixer(trees.root)
    },
    run: () => c.rereadEnvelope(kind)
  })
})

export const rereadScenarios = [
  rereadScenario("named", "dev re-read, 1,000 named files"),
  rereadScenario("scope", "dev re-read, 1,000 files by scope glob")
]
