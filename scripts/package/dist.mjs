// dist/ as the package ships it (npm run build:ts), built when it is missing or older than a source.
// A checkout has no `prepare` script (npm would list it to every user who installs the tarball,
// where its file is not), so what needs dist/ (the demo, the packaging tests) builds it here.
//
// Test files run side by side, and two of them may find dist/ stale at once: the check and the
// build run under flock(1) on this file, so the second waits for the first and then finds dist/
// fresh. Without flock (macOS) they run unlocked.
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, statSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const self = fileURLToPath(import.meta.url)
const repo = join(dirname(self), "..", "..")

/** Whether dist/ is missing, or older than package.json or some source under src/. */
export const distStale = () => {
  const built = join(repo, "dist", "index.js")
  if (!existsSync(built)) return true
  const sources = readdirSync(join(repo, "src"), { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"))
  const newest = Math.max(statSync(join(repo, "package.json")).mtimeMs, ...sources.map((f) => statSync(join(repo, "src", f)).mtimeMs))
  return statSync(built).mtimeMs < newest
}

const buildIfStale = () => {
  if (!distStale()) return { status: 0, built: false, output: "" }
  const r = spawnSync(process.execPath, [join(repo, "scripts", "package", "typescript.mjs")], { encoding: "utf8" })
  return { status: r.status ?? 1, built: true, output: `${r.stdout}${r.stderr}${r.error?.message ?? ""}` }
}

/** Builds dist/ if it is stale; answers whether it built; throws with tsc's output on failure. */
export const ensureDist = () => {
  const locked = spawnSync("flock", [self, process.execPath, self, "--build-if-stale"], { encoding: "utf8" })
  const r = locked.error ? buildIfStale() : { status: locked.status ?? 1, built: locked.stdout.trim() === "built", output: locked.stderr }
  if (r.status !== 0) throw new Error(`building dist/ failed:\n${r.output}`)
  return r.built
}

if (process.argv[1] === self && process.argv[2] === "--build-if-stale") {
  // The locked half of ensureDist(), run by flock.
  const r = buildIfStale()
  process.stderr.write(r.output)
  if (r.built && r.status === 0) process.stdout.write("built\n")
  process.exit(r.status)
} else if (process.argv[1] === self) {
  // node scripts/package/dist.mjs: what npm run typecheck runs first (the scripts import dist/).
  try {
    console.log(ensureDist() ? "dist/ built" : "dist/ is up to date")
  } catch (e) {
    console.error(e.message)
    process.exit(1)
  }
}
