#!/usr/bin/env node
// npm run build:prebuilds [-- linux-x64 linux-arm64]   (default: both)
//
// Builds the published prebuilds on a Debian/Ubuntu x86-64 machine: linux-x64 with the host
// compiler, linux-arm64 with Debian's cross compiler (apt-get install g++-aarch64-linux-gnu). Each
// is compiled in its own scratch copy of the native sources (so ./build, the developer's own
// addon, is never touched), with pinnedfs_portable=true (binding.gyp: libstdc++ and libgcc linked
// in, the glibc 2.33+ symbols redirected; the sandbox launcher a static PIE), stripped, written to
// prebuilds/linux-<arch>/, and then checked: a binary that needs more than glibc 2.28, or any
// libstdc++, fails the build.
import { spawnSync } from "node:child_process"
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { checkPrebuild } from "./prebuilds.mjs"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

/** What each target is compiled and stripped with (Debian's toolchain names). */
const toolchains = {
  "linux-x64": { arch: "x64", prefix: process.arch === "x64" ? "" : "x86_64-linux-gnu-" },
  "linux-arm64": { arch: "arm64", prefix: process.arch === "arm64" ? "" : "aarch64-linux-gnu-" }
}

// Node's headers: npm's nodedir setting, else the ones installed beside this node binary (every
// official build and the npm registry's node-linux-* packages carry include/node), else node-gyp
// downloads them.
const nodedir = () => {
  if (process.env.npm_config_nodedir) return process.env.npm_config_nodedir
  const prefix = dirname(dirname(process.execPath))
  return existsSync(join(prefix, "include", "node", "common.gypi")) ? prefix : undefined
}

const run = (command, args, options) => {
  const r = spawnSync(command, args, { stdio: "inherit", ...options })
  if (r.error) throw new Error(`${command}: ${r.error.message}`)
  if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${r.status ?? r.signal}`)
}

const build = (target) => {
  const tool = toolchains[target]
  const scratch = mkdtempSync(join(tmpdir(), `pinnedfs-prebuild-${target}-`))
  try {
    for (const entry of ["binding.gyp", "package.json", "native"]) {
      cpSync(join(root, entry), join(scratch, entry), { recursive: true })
    }
    const gcc = `${tool.prefix}gcc`
    const gxx = `${tool.prefix}g++`
    const env = {
      ...process.env,
      CC: gcc,
      CXX: gxx,
      LINK: gxx,
      // binding.gyp asks node for node-addon-api's include directory from the scratch copy.
      NODE_PATH: join(root, "node_modules"),
      // No test hooks in a published binary (binding.gyp, pinnedfs_test_hooks).
      GYP_DEFINES: `pinnedfs_portable=true pinnedfs_test_hooks=false pinnedfs_werror=${process.env.PINNEDFS_WERROR === "0" ? "false" : "true"}`
    }
    const nodeGyp = join(root, "node_modules", "node-gyp", "bin", "node-gyp.js")
    const headers = nodedir()
    const args = [nodeGyp, "rebuild", `--arch=${tool.arch}`, "-j", "2", ...(headers ? [`--nodedir=${headers}`] : [])]
    run(process.execPath, args, { cwd: scratch, env })
    const out = join(root, "prebuilds", target)
    mkdirSync(out, { recursive: true })
    const file = join(out, "pinnedfs.napi.glibc.node")
    copyFileSync(join(scratch, "build", "Release", "pinnedfs.node"), file)
    run(`${tool.prefix}strip`, ["--strip-unneeded", file])
    // The sandbox launcher, beside the addon: the library looks for it where the addon it loaded is.
    const launcher = join(out, "pinnedfs-launch")
    copyFileSync(join(scratch, "build", "Release", "pinnedfs-launch"), launcher)
    run(`${tool.prefix}strip`, [launcher])
    return [file, launcher]
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.platform !== "linux") {
    console.error("prebuilds are made on Linux (macOS and musl users build from source at install)")
    process.exit(2)
  }
  const targets = process.argv.slice(2).length > 0 ? process.argv.slice(2) : Object.keys(toolchains)
  let failed = false
  for (const target of targets) {
    if (!toolchains[target]) {
      console.error(`unknown target '${target}': one of ${Object.keys(toolchains).join(", ")}`)
      process.exit(2)
    }
    for (const file of build(target)) {
      const { report, problems } = checkPrebuild(file, toolchains[target].arch)
      console.log(`== ${target}: ${file}\n${report}`)
      if (problems.length > 0) {
        failed = true
        console.error(`${file} would not load on glibc 2.28:\n  ${problems.join("\n  ")}`)
      }
    }
  }
  process.exit(failed ? 1 : 0)
}
