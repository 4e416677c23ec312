// A stream writer killed mid-stream (test/root/streams.test.ts): it opens an atomic write stream
// on the target, writes 1 MiB chunks forever and says "W k" once chunk k is written, so the test
// can SIGKILL it while the temporary holds part of the new content. Arguments:
// transpiled-sources-dir strategy root relative-path.
import * as path from "node:path"

const [transpiled, strategy, root, rel] = process.argv.slice(2)
const { PinnedRoot } = await import(path.join(transpiled, "index.js"))
const pinned = await PinnedRoot.open(root, { strategy })
const stream = pinned.createWriteStream(rel, { atomic: true })
const chunk = Buffer.alloc(1 << 20, 0x6e)
for (let k = 1; ; k++) {
  await new Promise((done, fail) => stream.write(chunk, (e) => (e ? fail(e) : done())))
  process.stdout.write(`W ${k}\n`)
}
