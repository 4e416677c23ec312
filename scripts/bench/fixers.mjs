// The in-place fixers at scale: one fixer over 50,000 staged files with long names (about 6 MB of
// file names, more than this machine's ARG_MAX), run by `pinnedfs fix` (the built bin: argument
// lists cut under the measured limit, the pre-step bytes kept for rollback, one re-read) and by
// lint-staged (its own chunking, its backup stash, its `git add` of what the fixer changed), the
// same fixer on the same files, in the same run. Rounds alternate which goes first; each round starts
// from the same tree, restored and staged again (not timed). Wall time of the whole command.
//
// node scripts/bench/fixers.mjs [--quick] [--files N] [--rounds N]
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const repo = path.resolve(fileURLToPath(new URL("../..", import.meta.url)))
const bin = path.join(repo, "dist", "cli", "main.js")
const lintStaged = path.join(repo, "node_modules", "lint-staged", "bin", "lint-staged.js")

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

const longName = (i) =>
  `src/module-${i % 50}-with-a-rather-long-directory-name/component-with-an-equally-long-descriptive-file-name-${String(i).padStart(5, "0")}.ts`
const body = (i) => `export const value${i} = ${i}\n`

/** The fixer both run: rewrites every file it is given (a formatter's work, without its parsing). */
const fixerSource = [
  "const fs = require('fs')",
  "for (const f of process.argv.slice(2)) fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace(/ = /, ' = (') .replace(/\\n$/, ')\\n'))",
  ""
].join("\n")

const git = (cwd, ...args) => execFileSync("git", args, { cwd, stdio: ["ignore", "ignore", "pipe"], maxBuffer: 64 * 2 ** 20 })

/** A repository whose `files` are staged (new to its one empty commit), as lint-staged needs. */
const makeRepo = (dir, files, fixer) => {
  fs.mkdirSync(dir, { recursive: true })
  git(dir, "init", "-q")
  git(dir, "config", "user.email", "bench@example.invalid")
  git(dir, "config", "user.name", "bench")
  git(dir, "config", "commit.gpgsign", "false")
  fs.writeFileSync(path.join(dir, ".lintstagedrc.json"), JSON.stringify({ "src/**/*.ts": `node ${fixer}` }))
  git(dir, "add", ".lintstagedrc.json")
  git(dir, "commit", "-q", "-m", "empty")
  restore(dir, files)
}

/** Every file back to its first content, staged. */
const restore = (dir, files) => {
  for (let i = 0; i < files; i++) {
    const p = path.join(dir, longName(i))
    if (i < 50) fs.mkdirSync(path.dirname(p), { recursive: true }) // the 50 directories
    fs.writeFileSync(p, body(i))
  }
  git(dir, "add", "-A", "src")
}

const timed = (command, args, cwd) => {
  const started = performance.now()
  const out = spawnSync(command, args, { cwd, encoding: "utf8", maxBuffer: 64 * 2 ** 20, env: { ...process.env, FORCE_COLOR: "0" } })
  const ms = performance.now() - started
  if (out.status !== 0)
    throw new Error(
      `${path.basename(args[0] ?? command)} exited ${out.status ?? out.signal}: ${(out.stderr || out.stdout).trim().split("\n").slice(-3).join(" | ")}`
    )
  return { ms, stdout: out.stdout }
}

/** Checks that the fixer really ran on every file (and was not skipped by either). */
const allFixed = (dir, files) => {
  for (const i of [0, Math.floor(files / 2), files - 1]) {
    const text = fs.readFileSync(path.join(dir, longName(i)), "utf8")
    if (text !== `export const value${i} = (${i})\n`) throw new Error(`${longName(i)} was not fixed: ${JSON.stringify(text)}`)
  }
}

/**
 * The 50,000-file row (5,000 with quick): pinnedfs fix against lint-staged, same fixer, same files.
 * @param {{ quick?: boolean, log?: (...a: unknown[]) => void, files?: number, rounds?: number }} [options]
 */
export const fixersBench = async ({ quick = false, log = () => {}, files = quick ? 5_000 : 50_000, rounds = quick ? 1 : 3 } = {}) => {
  const failures = []
  const lines = []
  if (!fs.existsSync(bin)) return { lines, failures: ["fixers: dist/cli/main.js is missing: npm run build:ts"] }
  if (!fs.existsSync(lintStaged)) return { lines, failures: ["fixers: lint-staged is not installed: npm ci"] }
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-fixers-"))
  const started = performance.now()
  try {
    const fixer = path.join(base, "fixer.cjs")
    fs.writeFileSync(fixer, fixerSource)
    const dir = path.join(base, "repo")
    log(`  fixers: making ${files.toLocaleString("en")} staged files with long names`)
    makeRepo(dir, files, fixer)
    const argMax = Number(execFileSync("getconf", ["ARG_MAX"], { encoding: "utf8" }).trim())
    let names = 0
    for (let i = 0; i < files; i++) names += Buffer.byteLength(longName(i)) + 1
    const contenders = {
      "pinnedfs fix": () =>
        timed(process.execPath, [bin, "fix", "-q", "--json", "-w", dir, "-s", "src/**/*.ts", "--", process.execPath, fixer], dir),
      "lint-staged": () => timed(process.execPath, [lintStaged, "--quiet", "--cwd", dir], dir)
    }
    const times = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]))
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? Object.keys(contenders) : Object.keys(contenders).reverse()
      for (const name of order) {
        restore(dir, files)
        log(`  fixers: round ${r + 1}/${rounds}, ${name}`)
        try {
          const { ms, stdout } = contenders[name]()
          allFixed(dir, files)
          times[name].push(ms)
          log(`  fixers: ${name}: ${(ms / 1000).toFixed(2)} s`)
          if (name === "pinnedfs fix") {
            const report = JSON.parse(stdout)
            if (report.changed.length !== files)
              throw new Error(`pinnedfs fix reported ${report.changed.length} changed files, expected ${files}`)
          }
        } catch (e) {
          failures.push(`fixers / ${name}: ${e.message}`)
        }
      }
    }
    const pinned = median(times["pinnedfs fix"])
    const ls = median(times["lint-staged"])
    lines.push(
      `In-place fixers at scale: one fixer (a node script rewriting each file it is given) over ${files.toLocaleString("en")} staged files with long names (${(names / 2 ** 20).toFixed(1)} MiB of names; ARG_MAX ${argMax.toLocaleString("en")}), wall time of the whole command, median of ${rounds} round(s), the same run:`,
      "",
      "| contender | wall s | vs lint-staged |",
      "|---|---:|---:|",
      `| pinnedfs fix (argument lists under the measured limit, pre-step bytes kept, one re-read) | ${(pinned / 1000).toFixed(2)} | ${(ls / pinned).toFixed(2)}× |`,
      `| lint-staged ${JSON.parse(fs.readFileSync(path.join(repo, "node_modules", "lint-staged", "package.json"), "utf8")).version} (its chunks, backup stash, git add) | ${(ls / 1000).toFixed(2)} | 1.00× |`,
      "",
      `Fixer rows took ${((performance.now() - started) / 1000).toFixed(0)} s, tree made and removed included.`
    )
  } catch (e) {
    failures.push(`fixers: ${e.message}`)
  } finally {
    fs.rmSync(base, { recursive: true, force: true })
  }
  return { lines, failures }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2)
  const num = (flag) => {
    const at = argv.indexOf(flag)
    return at >= 0 ? Number(argv[at + 1]) : undefined
  }
  const result = await fixersBench({
    quick: argv.includes("--quick"),
    log: (l) => process.stderr.write(`${l}\n`),
    ...(num("--files") ? { files: num("--files") } : {}),
    ...(num("--rounds") ? { rounds: num("--rounds") } : {})
  })
  console.log(result.lines.join("\n"))
  if (result.failures.length) {
    console.log(`\nFAILED (${result.failures.length}):\n${result.failures.map((f) => `- ${f}`).join("\n")}`)
    process.exitCode = 1
  }
}
