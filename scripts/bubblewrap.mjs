// Where `npm test` and `npm run demo` find bubblewrap, which pinnedfs/confine runs commands under: on PATH when
// the machine has it, otherwise the distribution's package fetched into a cache without installing
// anything (scripts/package/bubblewrap.sh). CI installs it with the other tools instead.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { delimiter, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const repo = join(dirname(fileURLToPath(import.meta.url)), "..")

const onPath = (path) =>
  path
    .split(delimiter)
    .filter(Boolean)
    .some((d) => {
      try {
        fs.accessSync(join(d, "bwrap"), fs.constants.X_OK)
        return true
      } catch {
        return false
      }
    })

/**
 * A directory to put before PATH so that `bwrap` is found, "" when PATH already has it (or the
 * platform has no bubblewrap: macOS confines with sandbox-exec), or `{ missing: reason }` when it
 * could not be fetched. Says what it did on stderr, as `what`.
 */
export const bubblewrapDirectory = (what, path = process.env.PATH ?? "") => {
  if (process.platform !== "linux" || onPath(path)) return ""
  process.stderr.write(`${what}: no bubblewrap (bwrap) here; fetching Debian's into a cache, installing nothing\n`)
  const r = spawnSync("bash", [join(repo, "scripts/package/bubblewrap.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"]
  })
  if (r.status === 0) return r.stdout.trim()
  return { missing: `bubblewrap (bwrap) is not installed and could not be fetched here; install it (Debian: apt-get install bubblewrap)` }
}
