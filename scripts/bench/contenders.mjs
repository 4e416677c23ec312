// The contenders, each an adapter exposing the same operations over one tree. A contender that
// lacks an operation shows "n/a" for that scenario (node:fs has no batch call; the floor only reads).
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { rereadNode, rereadPinned } from "./reread.mjs"
import { drain } from "./scenario-handles.mjs"

const dist = new URL("../../dist/", import.meta.url)
const load = (rel) => import(new URL(rel, dist).href)

const atomicNodeWrite = async (abs, data, durable = true) => {
  // What a careful node:fs user writes for "never half-written": temp, rename; and for "survives a
  // power cut" an fsync of the data before the rename and of the directory after.
  const tmp = `${abs}.tmp-${process.pid}`
  const fh = await fsp.open(tmp, "w")
  try {
    await fh.writeFile(data)
    if (durable) await fh.sync()
  } finally {
    await fh.close()
  }
  await fsp.rename(tmp, abs)
  if (!durable) return
  const dir = await fsp.open(path.dirname(abs), "r")
  try {
    await dir.sync()
  } finally {
    await dir.close()
  }
}

export const nodeFs = (root) => {
  const abs = (rel) => path.join(root, rel)
  return {
    name: "node:fs/promises",
    strategy: "-",
    readFile: (rel) => fsp.readFile(abs(rel)),
    readFileWithin: (rel) => fsp.readFile(abs(rel)),
    // The protocol rows compare the client's three requests with one plain read.
    protocolRead: (rel) => fsp.readFile(abs(rel)),
    // The kernel's readFileString row is compared with one plain read of the bytes: what a caller
    // that did not use the kernel would do instead, so the baseline of the kernel's read target.
    readFileString: (rel) => fsp.readFile(abs(rel)),
    stat: (rel) => fsp.lstat(abs(rel)),
    exists: (rel) => fsp.access(abs(rel)),
    // fs.promises.writeFile truncates and writes in place: the baseline every write row compares with.
    writeFile: (rel, data) => fsp.writeFile(abs(rel), data),
    writeFileInPlace: (rel, data) => fsp.writeFile(abs(rel), data),
    writeFileReplace: (rel, data) => atomicNodeWrite(abs(rel), data, false),
    writeFileAtomic: (rel, data) => atomicNodeWrite(abs(rel), data),
    readDirectory: (rel) => fsp.readdir(abs(rel)),
    mkdirp: (rel) => fsp.mkdir(abs(rel), { recursive: true }),
    mkdirsPlan: async (plan) => {
      for (const d of plan) await fsp.mkdir(abs(d.path), { recursive: true, mode: d.mode })
    },
    removeTree: (rel) => fsp.rm(abs(rel), { recursive: true }),
    copyFile: (from, to) => fsp.copyFile(abs(from), abs(to)),
    cpTree: (from, to) => fsp.cp(abs(from), abs(to), { recursive: true, verbatimSymlinks: true }),
    rereadEnvelope: rereadNode(root),
    handleRead: async (rel) => {
      const h = await fsp.open(abs(rel), "r")
      try {
        await h.read(Buffer.alloc(4096), 0, 4096, 0)
      } finally {
        await h.close()
      }
    },
    streamRead: (rel, size) => drain(fs.createReadStream(abs(rel)), size),
    close: () => {}
  }
}

export const nodeFsSync = (root) => {
  const abs = (rel) => path.join(root, rel)
  return {
    name: "node:fs (sync)",
    strategy: "-",
    blocking: true,
    readFile: async (rel) => fs.readFileSync(abs(rel)),
    stat: async (rel) => fs.lstatSync(abs(rel)),
    batch: async (rels) => rels.map((r) => fs.readFileSync(abs(r))),
    close: () => {}
  }
}

export const pinnedRoot = async (root, strategy) => {
  const { PinnedRoot } = await load("index.js")
  const r = await PinnedRoot.open(root, { strategy })
  const within = await PinnedRoot.open(root, { strategy, symlinks: "within" })
  return {
    name: "PinnedRoot",
    strategy,
    readFile: (rel) => r.readFile(rel),
    readFileWithin: (rel) => within.readFile(rel),
    stat: (rel) => r.stat(rel),
    exists: (rel) => r.exists(rel),
    // The default: a temporary beside the target, renamed over it (crash-safe, not fsynced).
    writeFile: (rel, data) => r.writeFile(rel, data),
    writeFileInPlace: (rel, data) => r.writeFile(rel, data, { atomic: false }),
    writeFileReplace: (rel, data) => r.writeFile(rel, data),
    writeFileAtomic: (rel, data) => r.writeFile(rel, data, { durable: true }),
    readDirectory: (rel) => r.readDirectory(rel),
    glob: (pattern, rel) => r.glob(pattern, { root: rel }),
    batch: async (rels) => {
      const out = await r.batch(rels.map((p) => ({ operation: "readFile", path: p })))
      for (const e of out) if (!e.ok) throw e.error
      return out
    },
    mkdirp: (rel) => r.makeDirectory(rel, { recursive: true }),
    mkdirsPlan: async (plan) => {
      const out = await r.mkdirs(plan)
      if (out.error) throw out.error
    },
    removeTree: (rel) => r.remove(rel, { recursive: true }),
    copyFile: (from, to) => r.copyFile(from, to),
    cpTree: (from, to) => r.cp(from, to, { recursive: true }),
    rereadEnvelope: rereadPinned(root, r),
    handleRead: async (rel) => {
      const h = await r.open(rel, "r")
      try {
        await h.read(Buffer.alloc(4096), 0, 4096, 0)
      } finally {
        await h.close()
      }
    },
    streamRead: (rel, size) => drain(r.createReadStream(rel), size),
    close: () => {
      r.close()
      within.close()
    }
  }
}
