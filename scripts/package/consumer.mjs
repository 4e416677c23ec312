#!/usr/bin/env node
// The published tarball as a user gets it: packed with npm pack, installed with npm install into a
// fresh project. test/package/consumer.test.ts installs it offline, from npm's cache only;
// `node scripts/package/consumer.mjs --warm` (run by .ci/run, and once by hand on a new machine)
// makes the same installs online so that the cache holds every package and packument they need.
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))

/** What a TypeScript user of every entry point installs beside pinnedfs, at our tested versions. */
export const fullDependencies = Object.fromEntries(
  ["effect", "@effect/platform-node", "typescript", "@types/node"].map((name) => [name, manifest.devDependencies[name]])
)

const npm = (args, cwd) => {
  const r = spawnSync("npm", args, { cwd, encoding: "utf8", env: { ...process.env, npm_config_update_notifier: "false" } })
  return { ok: r.status === 0, output: `${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? r.error.message : ""}` }
}

/** npm pack of the working tree as it is (dist must be built); answers the tarball's path. */
export const pack = (destination) => {
  const r = spawnSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", destination], {
    cwd: root,
    encoding: "utf8"
  })
  if (r.status !== 0) throw new Error(`npm pack failed:\n${r.stderr}`)
  const [info] = JSON.parse(r.stdout)
  return { tarball: join(destination, info.filename), files: info.files.map((f) => f.path) }
}

/**
 * A fresh project in `dir` with the tarball and `dependencies` installed. `mode` is "offline" (the
 * test: npm's cache only) or "online" (the warm-up); `extra` are more npm arguments.
 */
export const install = (dir, tarball, dependencies, mode, extra = []) => {
  mkdirSync(dir, { recursive: true })
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify(
      { name: "pinnedfs-consumer", private: true, type: "module", dependencies: { pinnedfs: `file:${tarball}`, ...dependencies } },
      null,
      2
    )
  )
  const network = mode === "offline" ? "--offline" : "--prefer-online"
  return npm(["install", network, "--no-audit", "--no-fund", "--loglevel=error", ...extra], dir)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv[2] !== "--warm") {
    console.error("usage: node scripts/package/consumer.mjs --warm")
    process.exit(2)
  }
  const scratch = mkdtempSync(join(tmpdir(), "pinnedfs-consumer-warm-"))
  try {
    const { tarball } = pack(scratch)
    for (const [name, dependencies] of /** @type {Array<[string, Record<string, string>]>} */ ([
      ["full", fullDependencies],
      ["bare", {}]
    ])) {
      const r = install(join(scratch, name), tarball, dependencies, "online")
      if (!r.ok) {
        console.error(`warm-up install (${name}) failed:\n${r.output}`)
        process.exit(1)
      }
    }
    console.log("npm cache holds what the consumer tests install")
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}
