/**
 * The macOS rendering of a mount plan: a `sandbox-exec` profile (SBPL). In SBPL the last matching
 * rule wins, which is the same "later layer on top" order the mount plan already has, so each
 * layer becomes one rule, in order. Paths are the canonical spellings the plan holds (APFS names
 * are UTF-8).
 *
 * Untested on a Mac: the text is unit-tested here, the profile has never been run by
 * `sandbox-exec` in this project's CI. Unlike bubblewrap binds, SBPL rules name paths, so the
 * kernel resolves them when the child acts; the final validation's check of each path stands, but
 * a path replaced after it is judged by its new name.
 *
 * @since 0.1.0
 */
import type { Layer } from "./layers.ts"
import type { Mode } from "./policy.ts"
import { type RawPath, textOf } from "./raw.ts"
import { ConfinementError } from "./errors.ts"

const quote = (raw: RawPath): string => {
  const text = textOf(raw)
  if (text === undefined) throw new ConfinementError("unnameable", "a sandbox profile can only name UTF-8 paths")
  return `"${text.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`
}

// Device files every process writes: without them a confined shell cannot even redirect output.
const devices = [
  '(literal "/dev/null")',
  '(literal "/dev/zero")',
  '(literal "/dev/dtracehelper")',
  '(regex #"^/dev/tty")',
  '(regex #"^/dev/fd/")'
]

/**
 * The profile for `sandbox-exec -p`.
 *
 * @since 0.1.0
 */
export const renderSandboxProfile = (input: { readonly mode: Mode; readonly layers: ReadonlyArray<Layer> }): string => {
  const out = ["(version 1)", "(allow default)"]
  if (input.mode === "confined") {
    out.push('(deny file-write* (subpath "/"))')
    out.push(`(allow file-write* ${devices.join(" ")})`)
  }
  for (const l of input.layers) {
    const subpath = `(subpath ${quote(l.path)})`
    switch (l.op) {
      case "bind":
        out.push(l.writable ? `(allow file-read* file-write* ${subpath})` : `(allow file-read* ${subpath})\n(deny file-write* ${subpath})`)
        break
      case "mask-directory":
        out.push(`(deny file-read* file-write* ${subpath})`)
        break
      case "mask-file":
        out.push(`(deny file-read* file-write* (literal ${quote(l.path)}))`)
        break
    }
  }
  return `${out.join("\n")}\n`
}
