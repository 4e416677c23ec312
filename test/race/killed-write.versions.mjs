// The versions the killed writer (killed-write.child.mjs) writes, shared with the test that checks
// what the disk holds after the kill. Each is self-describing and of its own length (a prefix of
// any version is no version), so "old or new, never a prefix" is one comparison.
const sizes = [300_000, 1_100_000, 70_000, 2_500_000]

/** Version k's bytes; version 0 is what the file holds before the writer starts. */
export const versionOf = (k) => {
  const size = sizes[k % sizes.length]
  const out = Buffer.alloc(size, 97 + (k % 26))
  out.write(`<v${k}>`, 0, "latin1")
  out.write(`</v${k}>`, size - `</v${k}>`.length, "latin1")
  return out
}

/** The payload bytes versions 1..k write in all. */
export const bytesThrough = (k) => {
  let n = 0
  for (let i = 1; i <= k; i++) n += versionOf(i).length
  return n
}
