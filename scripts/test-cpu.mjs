#!/usr/bin/env node
// node scripts/test-cpu.mjs FILE [N]: the CPU a test run spent, by file, from the lines
// `PINNEDFS_TEST_CPU_LOG=FILE npm test` wrote (test/support/cpu-per-file.ts): the total, then the
// N heaviest files (default 25) with their own and their children's seconds.
import * as fs from "node:fs"

const [file, most = "25"] = process.argv.slice(2)
if (file === undefined) {
  console.error("usage: node scripts/test-cpu.mjs FILE [N]")
  process.exit(2)
}
const rows = fs
  .readFileSync(file, "utf8")
  .split("\n")
  .filter((l) => l !== "")
  .map((l) => JSON.parse(l))
  .map((r) => ({ ...r, total: r.self + r.children }))
  .sort((a, b) => b.total - a.total)
const sum = (key) => rows.reduce((n, r) => n + r[key], 0).toFixed(0)
console.log(
  `${rows.length} files: ${sum("total")} s of CPU (${sum("self")} s in the test processes, ${sum("children")} s in their children)`
)
console.log("| file | CPU s | own | children |\n|---|---:|---:|---:|")
for (const r of rows.slice(0, Number(most)))
  console.log(`| ${r.file} | ${r.total.toFixed(1)} | ${r.self.toFixed(1)} | ${r.children.toFixed(1)} |`)
