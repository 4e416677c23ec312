// The demo's command-line sections: `pinnedfs run` and `pinnedfs fix` as a user types them, run from
// the built bin (dist/cli/main.js) in child processes, with their output shown as they print it.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const bin = new URL("../../dist/cli/main.js", import.meta.url)

/** Runs `pinnedfs ARGS` in `cwd`; answers its status and output. */
const pinnedfs = (args, cwd) => {
  const r = spawnSync(process.execPath, [bin.pathname, ...args], { cwd, encoding: "utf8", timeout: 120_000 })
  return { code: r.status, stdout: r.stdout ?? "", stderr: `${r.stderr ?? ""}${r.error ? r.error.message : ""}` }
}

const indented = (text) =>
  text
    .trimEnd()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => `     ${l}`)
    .join("\n")

/**
 * `pinnedfs run`: a shell in the workspace writes a file there, then tries `.git/config` and a file
 * outside. Needs bubblewrap; where it cannot confine, `sandbox.reason` says why and nothing runs.
 */
export const runSection = (say, { workspace, outside, sandbox }) => {
  const script = [
    'echo draft > notes.txt && echo "notes.txt: written (the workspace is writable)"',
    '{ echo "[alias]" >> .git/config; } 2>/dev/null || echo ".git/config: refused (read-only)"',
    `{ echo x >> "${outside}/secret.txt"; } 2>/dev/null || echo "../outside/secret.txt: refused (read-only)"`
  ].join("\n")
  say("   $ pinnedfs run -- sh -c 'echo draft > notes.txt; echo ... >> .git/config; ...'\n")
  if (!sandbox.available) {
    say(`     skipped: this machine cannot confine a command: ${sandbox.reason}`)
    say("     (pinnedfs run would exit 125 with that reason, and run nothing unconfined)")
    return
  }
  const config = fs.readFileSync(path.join(workspace, ".git/config"), "utf8")
  const r = pinnedfs(["run", "--", "/bin/sh", "-c", script], workspace)
  say(indented(`${r.stdout}${r.stderr}`))
  const intact = fs.readFileSync(path.join(workspace, ".git/config"), "utf8") === config
  say(`\n   exit status ${r.code}; .git/config unchanged on disk: ${intact ? "yes" : "NO"}`)
  say(
    "   The command ran in bubblewrap: the workspace writable, every .git read-only, ~/.ssh and\n" +
      "   ~/.gnupg hidden, the rest of the machine read-only. A launch it cannot confine is refused."
  )
}

/**
 * `pinnedfs fix`: an in-place fixer (trailing blanks, `var` to `let`) rewrites src/ on disk; pinnedfs
 * re-reads the scope after it and reports what changed.
 */
export const fixSection = (say, { workspace, base }) => {
  const fixer = path.join(base, "tidy.cjs")
  fs.writeFileSync(
    fixer,
    'const fs = require("node:fs")\n' +
      "for (const f of process.argv.slice(2)) {\n" +
      '  const text = fs.readFileSync(f, "utf8")\n' +
      '  fs.writeFileSync(f, text.replace(/[ \\t]+$/gm, "").replace(/\\bvar\\b/g, "let"))\n' +
      "}\n"
  )
  const file = path.join(workspace, "src/lib/util/file.txt")
  const target = path.join(workspace, "src/app.ts")
  fs.writeFileSync(target, "var count = 1   \nexport const next = () => count + 1\n")
  const before = fs.readFileSync(target, "utf8")
  say("   $ pinnedfs fix --scope 'src/**/*.ts' -- node tidy.cjs\n")
  const r = pinnedfs(["fix", "--quiet", "--scope", "src/**/*.ts", "--", process.execPath, fixer], workspace)
  say(indented(r.stdout + (r.code === 0 ? "" : r.stderr)))
  const after = fs.readFileSync(target, "utf8")
  say(`\n   exit status ${r.code}; src/app.ts before and after the fixer:`)
  say(indented(before.replace(/ +$/gm, (blanks) => "·".repeat(blanks.length))))
  say("     ->")
  say(indented(after))
  say(
    "   pinnedfs handed the fixer the files in scope, then re-read the scope itself (relative to the\n" +
      "   pinned workspace, no link followed) and reported what the fixer changed; a file it broke or\n" +
      "   made unreadable would fail the step. src/lib/util/file.txt is not in scope: " +
      (fs.existsSync(file) ? "untouched." : "missing!")
  )
}
