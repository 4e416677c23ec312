// Awaited reads in a process of its own, so that its libuv pool has the size the parent gives it
// (UV_THREADPOOL_SIZE is read once, when the pool starts). Prints the work items each of a few
// attempts of `reads` awaited reads used, as JSON. Arguments: directory, reads, strategy.
import { loadAddon } from "./lifetime/addon.mjs"

const native = loadAddon()
if (native.workItems === undefined) {
  console.log(JSON.stringify({ hooks: false }))
  process.exit(0)
}
const [dir, count, strategy] = process.argv.slice(2)
const reads = Number(count)
const h = await native.pin(dir, strategy)
await h.call(native.ops.readFile, "a.txt", false, 1 << 20, false)
const used = []
for (let attempt = 0; attempt < 4; attempt++) {
  const before = native.workItems()
  for (let i = 0; i < reads; i++) {
    const got = Buffer.from(await h.call(native.ops.readFile, "a.txt", false, 1 << 20, false)).toString()
    if (got !== "lingers") throw new Error(`read ${i} answered ${JSON.stringify(got)}`)
  }
  used.push(native.workItems() - before)
}
console.log(JSON.stringify({ hooks: true, used }))
