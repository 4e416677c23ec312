// File handles and streams: open/read/close through PinnedRoot.open's handle, and one large file
// streamed through PinnedRoot.createReadStream, each beside fs.promises' FileHandle and
// fs.createReadStream in the same run.
import * as fs from "node:fs"
import * as path from "node:path"
import { SHALLOW } from "./trees.mjs"

// 1 GiB; 64 MiB with --quick (the trees are made for one run, so the size is the run's).
const bigBytes = process.argv.includes("--quick") ? 64 << 20 : 1 << 30
const BIG = "big.bin"

const ensureBig = (root) => {
  const abs = path.join(root, BIG)
  if (fs.existsSync(abs) && fs.statSync(abs).size === bigBytes) return
  const chunk = Buffer.alloc(8 << 20, 0x64)
  const fd = fs.openSync(abs, "w")
  try {
    for (let at = 0; at < bigBytes; at += chunk.length) fs.writeSync(fd, chunk, 0, Math.min(chunk.length, bigBytes - at))
  } finally {
    fs.closeSync(fd)
  }
}

export const handleScenarios = [
  {
    id: "handle-read-4k",
    title: "open, read 4 KiB, close through a file handle (node: fs.promises.open)",
    needs: "handleRead",
    unit: (c) => () => c.handleRead(SHALLOW)
  },
  {
    id: "stream-1g",
    title: `stream ${bigBytes >> 20} MiB through a read stream (node: fs.createReadStream)`,
    needs: "streamRead",
    ops: 1,
    rounds: 3,
    minMs: 0,
    warmupMs: 0,
    unit: (c, trees) => {
      ensureBig(trees.root)
      return () => c.streamRead(BIG, bigBytes)
    }
  }
]

/** Reads a stream to its end, counting bytes; a short count is a failure, not a fast row. */
export const drain = async (stream, expected) => {
  let n = 0
  for await (const chunk of stream) n += chunk.length
  if (n !== expected) throw new Error(`stream gave ${n} bytes, expected ${expected}`)
}
