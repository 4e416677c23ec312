#!/usr/bin/env node
// npm run check:prebuilds — the promised prebuilds exist, are for the right machine, and load on
// glibc 2.28 without libstdc++/libgcc. prepublishOnly runs it (nothing is published without them);
// test/package/prebuilds.test.ts runs it on what npm run build:prebuilds made.
import { existsSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, portabilityProblems, readDynamic } from "./elf.mjs"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

/** The glibc the prebuilds must load on: RHEL 8, Debian 10, Ubuntu 20.04. */
export const glibcFloor = "2.28"

/** The prebuilds the package promises (README "Install"), in node-gyp-build's layout. */
export const promised = [
  { target: "linux-x64", arch: "x64", machine: "x86_64" },
  { target: "linux-arm64", arch: "arm64", machine: "aarch64" }
]

export const prebuildPath = (target, packageRoot = root) => join(packageRoot, "prebuilds", target, "pinnedfs.napi.glibc.node")

/** The sandbox launcher beside each prebuild (native/launcher: an executable, static in the prebuilds). */
export const launcherPath = (target, packageRoot = root) => join(packageRoot, "prebuilds", target, "pinnedfs-launch")

/** The report and the problems (empty when fine) of one prebuild for `arch`. */
export const checkPrebuild = (file, arch) => {
  const want = promised.find((p) => p.arch === arch)?.machine
  let info
  try {
    info = readDynamic(file)
  } catch (e) {
    return { report: "", problems: [e.message] }
  }
  const problems = portabilityProblems(info, glibcFloor)
  if (info.machine !== want) problems.unshift(`is ${info.machine}, expected ${want}`)
  return { report: describe(info), problems }
}

/** Every promised prebuild and launcher under `packageRoot`, checked: `{ target, file, report, problems }`. */
export const checkPromised = (packageRoot = root) =>
  promised.flatMap(({ target, arch }) =>
    [prebuildPath(target, packageRoot), launcherPath(target, packageRoot)].map((file) => {
      if (!existsSync(file)) return { target, file, report: "", problems: [`missing (npm run build:prebuilds makes it)`] }
      return { target, file, ...checkPrebuild(file, arch) }
    })
  )

/** Prints each check; answers whether all passed. */
export const reportPromised = (packageRoot = root, log = console.log, error = console.error) => {
  let ok = true
  for (const r of checkPromised(packageRoot)) {
    if (r.report) log(`== ${r.target}: ${r.file}\n${r.report}`)
    if (r.problems.length > 0) {
      ok = false
      error(`${r.target} (${r.file}):\n  ${r.problems.join("\n  ")}`)
    }
  }
  return ok
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.exit(reportPromised(process.argv[2] ?? root) ? 0 : 1)
}
