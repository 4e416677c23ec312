#!/usr/bin/env node
// npm run typecheck: tsc over the sources, tests and vitest.config.ts (tsconfig.json), and over the
// plain-JavaScript scripts with checkJs (tsconfig.scripts.json), which import the built package:
// so dist/ is built first when stale. The two checks are independent and each runs on one core,
// so they run side by side: [dist/, then the scripts] beside [the sources and tests].
import { spawn } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { ensureDist } from "./package/dist.mjs"

const repo = join(dirname(fileURLToPath(import.meta.url)), "..")
const tsc = join(repo, "node_modules", "typescript", "bin", "tsc")

/** Runs tsc with `args`, its output passed through; answers its exit status. */
const check = (args) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [tsc, ...args], { cwd: repo, stdio: "inherit" })
    child.once("error", () => resolve(1))
    child.once("close", (code) => resolve(code ?? 1))
  })

const scripts = async () => {
  // ensureDist blocks this thread while tsc builds dist/ in a child; the other check is already running.
  await new Promise((resolve) => setImmediate(resolve))
  ensureDist()
  return check(["-p", "tsconfig.scripts.json"])
}

const statuses = await Promise.all([check(["-p", "tsconfig.json", "--noEmit"]), scripts()])
process.exit(statuses.every((s) => s === 0) ? 0 : 1)
