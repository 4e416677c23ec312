#!/usr/bin/env node
// npm run format (rewrites) / npm run format:check (CI: fails on any difference or lint finding).
// TypeScript and JavaScript go through Biome (biome.json: formatter and linter); C and C++ through
// clang-format (.clang-format), over the files git tracks, the macOS shim's stand-in system headers
// excepted (they copy the declarations' own layout).
import { execFileSync, spawnSync } from "node:child_process"

const check = process.argv.includes("--check")
const run = (cmd, args) => {
  const r = spawnSync(cmd, args, { stdio: "inherit" })
  if (r.error) {
    console.error(`format: cannot run ${cmd}: ${r.error.message}${cmd === "clang-format" ? " (Debian: apt-get install clang-format)" : ""}`)
    process.exit(1)
  }
  return r.status ?? 1
}

let status = run("npx", ["--no-install", "biome", check ? "ci" : "check", ...(check ? [] : ["--write"]), "."])
const sources = execFileSync("git", ["ls-files", "*.c", "*.cc", "*.h"], { encoding: "utf8" })
  .split("\n")
  .filter((f) => f !== "" && !f.startsWith("native/ci/darwin-shim/"))
status ||= run("clang-format", [...(check ? ["--dry-run", "--Werror"] : ["-i"]), ...sources])
process.exit(status)
