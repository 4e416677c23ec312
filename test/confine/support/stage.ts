/**
 * A runnable copy of the package for child processes: `src/` transpiled to JavaScript (Node 20 runs
 * no TypeScript), the runtime dependencies, the built addon and the test fixtures, in a
 * world-readable temporary directory, so a child (an unprivileged one too) can load pinnedfs
 * even from a checkout others cannot enter. Made once per test file.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { transpileTree } from "../../support/transpile-cache.ts"
import { onFileEnd } from "../../support/file-end.ts"

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")
let staged: string | undefined

onFileEnd(() => {
  if (staged) fs.rmSync(staged, { recursive: true, force: true })
  staged = undefined
})

/** The staged package's directory (module type, `src/`, `node_modules/`, `build/`, fixtures). */
export const stagePackage = (): string => {
  if (staged) return staged
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-stage-"))
  fs.chmodSync(dir, 0o755)
  // Named and exported like the package, so code written against "pinnedfs/confine" runs in here.
  const manifest = { name: "pinnedfs", type: "module", exports: { ".": "./src/index.js", "./confine": "./src/confine/index.js" } }
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify(manifest), { mode: 0o644 })
  fs.mkdirSync(path.join(dir, "src"), { mode: 0o755 })
  transpileTree(path.join(repo, "src"), path.join(dir, "src"))
  for (const dep of ["picomatch", "commander", "node-gyp-build"]) {
    fs.cpSync(path.join(repo, "node_modules", dep), path.join(dir, "node_modules", dep), { recursive: true })
  }
  fs.mkdirSync(path.join(dir, "build", "Release"), { recursive: true, mode: 0o755 })
  // The addon and the sandbox launcher beside it (an executable: kept 0755 below).
  for (const f of ["pinnedfs.node", "pinnedfs-launch"])
    fs.copyFileSync(path.join(repo, "build", "Release", f), path.join(dir, "build", "Release", f))
  // Under PREBUILDS_ONLY (CI's Node 22 and 24 passes) node-gyp-build looks in prebuilds/ only.
  if (fs.existsSync(path.join(repo, "prebuilds"))) fs.cpSync(path.join(repo, "prebuilds"), path.join(dir, "prebuilds"), { recursive: true })
  fs.cpSync(path.join(repo, "test", "confine", "fixtures"), path.join(dir, "fixtures"), { recursive: true })
  // Readable by anyone: cpSync keeps the checkout's modes, which may be closed to others.
  const open = (p: string) => {
    const st = fs.statSync(p)
    fs.chmodSync(p, st.isDirectory() || path.basename(p) === "pinnedfs-launch" ? 0o755 : 0o644)
    if (st.isDirectory()) for (const n of fs.readdirSync(p)) open(path.join(p, n))
  }
  open(dir)
  staged = dir
  return dir
}
