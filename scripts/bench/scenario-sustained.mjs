// Sustained concurrency: 256 reads kept in flight (each lane starts its next read as soon as its
// last one settles) until 20 waves' worth, 5,120 reads, are done. Unlike "read-4k-d8-256", which
// starts 256 at once and waits for the slowest, this is the steady state of a busy program: it
// shows whether a contender's throughput grows with concurrency or stays at its awaited rate.
// The kernels are compared here with Effect's plain NodeFileSystem (no kernel) and node:fs.
import { pool } from "./measure.mjs"
import { DEEP } from "./trees.mjs"

const lanes = 256
const waves = 20

export const readStringSustained = {
  id: "read-string-4k-d8-256x20",
  title: "readFileString 4 KiB, depth 8, 256 in flight sustained over 20 waves",
  needs: "readFileString",
  ops: lanes * waves,
  rounds: 5,
  unit: (c) => () => pool(lanes * waves, lanes, () => c.readFileString(DEEP))
}
