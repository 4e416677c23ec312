#!/usr/bin/env node
// npm test [-- vitest arguments]: the whole suite (or the files named) on a Node pinnedfs supports.
//
// On this Node when it is a supported one (package.json engines). Below the floor (Node 20, the
// system Node of Debian 12 and of this project's own machine) the suite runs on the newest Node of
// the main line instead, from the npm registry (scripts/node-lines.mjs says how, and says so on
// stderr): vitest 5 and the Effect peers no longer run on Node 20, and a verdict from a Node the
// package does not support would say nothing about the package.
import { spawnSync } from "node:child_process"
import { delimiter, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { bubblewrapDirectory } from "./bubblewrap.mjs"
import { supportedNode } from "./node-lines.mjs"

const repo = join(dirname(fileURLToPath(import.meta.url)), "..")
const node = supportedNode("npm test")
// Children the tests start by name (node, npm's shebang) get the same Node, and pinnedfs/confine's
// tests a bubblewrap: the machine's, or one fetched for the run (scripts/bubblewrap.mjs). Where
// none can be had, CI fails on it (it installs one first); elsewhere the tests that need it are
// skipped, each printing why (test/support/per-file.ts).
/** @type {NodeJS.ProcessEnv} */
const env = { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ""}` }
const bwrap = bubblewrapDirectory("npm test", env.PATH)
if (typeof bwrap === "string" && bwrap !== "") env.PATH = `${bwrap}${delimiter}${env.PATH}`
if (typeof bwrap === "object") {
  process.stderr.write(`npm test: ${bwrap.missing}\n`)
  if (!process.env.CI) {
    process.stderr.write("npm test: the tests of pinnedfs/confine are skipped, each saying so\n")
    env.PINNEDFS_TEST_NO_SANDBOX = bwrap.missing
  }
}
const r = spawnSync(node, [join(repo, "node_modules/vitest/vitest.mjs"), "run", ...process.argv.slice(2)], {
  cwd: repo,
  stdio: "inherit",
  env
})
if (r.error) {
  console.error(`npm test: ${r.error.message}`)
  process.exit(1)
}
process.exit(r.status ?? 1)
