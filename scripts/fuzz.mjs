#!/usr/bin/env node
// npm run fuzz [-- --seconds N] [-- --targets fuzz_path_lex,fuzz_request] [-- --jobs J]
//
// --jobs J runs J targets at once (default 1), each for the full N seconds on a core of its own.
//
// Builds the libFuzzer targets (native/fuzz/fuzz_*.cc) with clang, ASan and UBSan into build-fuzz/
// and runs each for N seconds (default 60). Installs nothing: clang (with its libFuzzer runtime)
// must already be there. Each target reads its committed corpus, native/fuzz/corpus/<target>/
// (seeds and past crashers, which are replayed first), and grows a working corpus in
// build-fuzz/corpus/<target>/. A crasher is copied into native/fuzz/corpus/<target>/ as
// regression-<sha1> (commit it with the fix) and the run exits 1.
import { execFileSync, spawn, spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { option as optionOf, secondsOption } from "./options.mjs"

const argv = process.argv.slice(2)
const option = (name, fallback) => optionOf(argv, name, fallback)
const seconds = secondsOption(argv, "60")
const jobs = Number(option("jobs", "1"))
if (!Number.isInteger(jobs) || jobs < 1) {
  console.error("--jobs must be a positive integer")
  process.exit(2)
}

const repo = path.resolve(fileURLToPath(new URL("..", import.meta.url)))
const build = path.join(repo, "build-fuzz")
const log = (...a) => process.stderr.write(`${a.join(" ")}\n`)

const found = (cmd) => spawnSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" }).status === 0
if (!found("clang") || !found("clang++")) {
  console.error("clang is missing. On Debian/Ubuntu: apt-get install -y clang (libFuzzer comes with it).")
  process.exit(1)
}

const all = fs
  .readdirSync(path.join(repo, "native/fuzz"))
  .filter((f) => /^fuzz_.*\.cc$/.test(f))
  .map((f) => f.replace(/\.cc$/, ""))
  .sort()
const wanted = option("targets", "")?.split(",").filter(Boolean) ?? []
const targets = wanted.length ? all.filter((t) => wanted.includes(t)) : all
if (targets.length === 0) {
  console.error(`no fuzz targets matched; have: ${all.join(", ")}`)
  process.exit(2)
}

log(`== building ${targets.join(", ")} (clang, ASan, UBSan, libFuzzer) into build-fuzz/`)
execFileSync(
  "cmake",
  ["-S", repo, "-B", build, "-DPINNEDFS_FUZZ=ON", "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DCMAKE_CXX_COMPILER=clang++"],
  { stdio: ["ignore", "ignore", "inherit"] }
)
execFileSync("cmake", ["--build", build, "-j", String(Math.max(1, Math.min(2, os.cpus().length))), "--target", ...targets], {
  stdio: ["ignore", "ignore", "inherit"]
})

// The scratch trees the executing targets build, on tmpfs when there is one; removed afterwards.
const shm = fs.existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir()
const scratch = fs.mkdtempSync(path.join(shm, "pinnedfs-fuzzrun-"))
const env = {
  ...process.env,
  PINNEDFS_FUZZ_DIR: scratch,
  ASAN_OPTIONS: "detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1",
  UBSAN_OPTIONS: "halt_on_error=1:print_stacktrace=1"
}

/** Runs one target for `seconds`; answers its summary row. Crashers are kept in the corpus. */
const fuzz = async (target) => {
  const committed = path.join(repo, "native/fuzz/corpus", target)
  const working = path.join(build, "corpus", target)
  const artifacts = path.join(build, "artifacts", target)
  for (const d of [committed, working, artifacts]) fs.mkdirSync(d, { recursive: true })
  log(`== ${target}: ${seconds} s`)
  const args = [
    `-max_total_time=${seconds}`,
    "-timeout=10",
    "-rss_limit_mb=2048",
    "-print_final_stats=1",
    `-artifact_prefix=${artifacts}/`,
    working,
    committed
  ]
  // The fuzzer's own progress goes to stdout when one target runs at a time; with several at once
  // their lines would interleave, so only each one's summary is shown.
  const child = spawn(path.join(build, target), args, { env, stdio: ["ignore", jobs === 1 ? "inherit" : "ignore", "pipe"] })
  let stderr = ""
  child.stderr.setEncoding("utf8").on("data", (d) => {
    stderr = (stderr + d).slice(-(64 << 20))
  })
  const status = await new Promise((resolve) => child.once("close", (code, signal) => resolve(code ?? signal)))
  const tail = stderr.split("\n").filter((l) => /DONE|ERROR|invariant|SUMMARY|Test unit written|stat::number_of_executed_units/.test(l))
  for (const line of tail.slice(-8)) log(`   ${target}: ${line}`)
  const execs = /stat::number_of_executed_units:\s*(\d+)/.exec(stderr)?.[1] ?? "?"
  const crashers = fs.readdirSync(artifacts).filter((f) => /^(crash|leak|timeout|oom|slow-unit)-/.test(f))
  const kept = []
  for (const c of crashers) {
    const bytes = fs.readFileSync(path.join(artifacts, c))
    const name = `regression-${createHash("sha1").update(bytes).digest("hex")}`
    fs.writeFileSync(path.join(committed, name), bytes)
    fs.rmSync(path.join(artifacts, c))
    kept.push(`${c.split("-")[0]} -> native/fuzz/corpus/${target}/${name}`)
  }
  const ok = status === 0 && kept.length === 0
  if (!ok && kept.length === 0) log(stderr.split("\n").slice(-60).join("\n"))
  return { target, seconds, execs, ok, status: ok ? "ok" : `FAILED (exit ${status})`, kept }
}

const summary = []
try {
  // `jobs` targets at a time, each on a core of its own (the fuzzers are single-threaded).
  const queue = [...targets]
  const worker = async () => {
    for (let t = queue.shift(); t !== undefined; t = queue.shift()) summary.push(await fuzz(t))
  }
  await Promise.all(Array.from({ length: Math.min(jobs, targets.length) }, worker))
} finally {
  fs.rmSync(scratch, { recursive: true, force: true })
}
summary.sort((a, b) => a.target.localeCompare(b.target))
const failed = summary.some((s) => !s.ok)

console.log("\n| target | seconds | executions | result |")
console.log("|---|---:|---:|---|")
for (const s of summary)
  console.log(`| ${s.target} | ${s.seconds} | ${s.execs} | ${s.status}${s.kept.length ? `: ${s.kept.join(", ")}` : ""} |`)
process.exit(failed ? 1 : 0)
