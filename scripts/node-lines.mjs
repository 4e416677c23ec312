// The Node lines pinnedfs supports, which are the lines CI tests: read from package.json's
// `engines.node` (`^22.19.0 || ^24.0.0 || ^26.0.0`), the one place they are written. .ci/run,
// `npm test`, `npm run demo` and vitest.config.ts all take them from here.
import { spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const repo = join(dirname(fileURLToPath(import.meta.url)), "..")
const manifest = JSON.parse(readFileSync(join(repo, "package.json"), "utf8"))

const parse = (version) => version.split(".").map(Number)
const compare = (a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]

/** Each `^major.minor.patch` range of `engines.node`, oldest line first. */
export const ranges = manifest.engines.node.split("||").map((range) => {
  const m = /^\^(\d+\.\d+\.\d+)$/.exec(range.trim())
  if (!m) throw new Error(`package.json engines.node: '${range.trim()}' is not a ^major.minor.patch range`)
  return { line: parse(m[1])[0], floor: parse(m[1]) }
})

/** The major versions CI runs: [22, 24, 26]. */
export const lines = ranges.map((r) => r.line)

/** The oldest supported line: CI's whole-suite pass, and what a Node below the floor is given. */
export const mainLine = lines[0]

/** The lowest supported version, "22.19.0". */
export const floor = ranges[0].floor.join(".")

/** Whether `version` ("20.20.2") is older than every supported line. */
export const belowFloor = (version = process.versions.node) => compare(parse(version), ranges[0].floor) < 0

/**
 * A Node binary to run `what` on: this process's when its version is at or above the floor;
 * otherwise the newest release of the main line from the npm registry's node-linux-<arch> package
 * (scripts/package/fetch.sh, with npm's own client; kept in ~/.cache/pinnedfs-ci, so only the first
 * run downloads it). Says which on stderr. Exits when neither is possible.
 */
export const supportedNode = (what) => {
  if (!belowFloor()) return process.execPath
  const say = (line) => process.stderr.write(`${what}: ${line}\n`)
  say(`Node ${process.version} is older than pinnedfs supports (${manifest.engines.node}).`)
  if (process.platform !== "linux" || !["x64", "arm64"].includes(process.arch)) {
    say(`install Node ${mainLine} (${floor} or later), then run it again.`)
    process.exit(1)
  }
  const spec = `node-linux-${process.arch}@${mainLine}`
  say(`running on Node ${mainLine} from the npm registry (${spec}) instead.`)
  const r = spawnSync("bash", [join(repo, "scripts/package/fetch.sh"), spec], {
    encoding: "utf8",
    env: { ...process.env, PINNEDFS_FETCH_PREFER_CACHE: "1" },
    stdio: ["ignore", "pipe", "inherit"]
  })
  if (r.status !== 0) {
    say(`could not fetch ${spec} (${r.error?.message ?? `exit ${r.status}`}); install Node ${mainLine} and run it again.`)
    process.exit(1)
  }
  return join(r.stdout.trim(), "bin", "node")
}
