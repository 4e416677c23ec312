// The benchmark's trees, made fresh in a temporary directory for each run.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

export const DEEP = "a/b/c/d/e/f/g/file.txt" // depth 8 (eight components)
export const SHALLOW = "file.txt" // depth 1
// DEEP's file through the in-root link `linked -> a/b/c/d`: a read with `symlinks: "within"`.
export const LINKED = "linked/e/f/g/file.txt"

const content = Buffer.alloc(4096, 0x61)

export const makeTrees = ({ globFiles = 10_000, dirEntries = 1_000, removeFiles = 1_000 } = {}) => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-bench-"))
  const root = path.join(base, "workspace")
  fs.mkdirSync(root)
  /** @param {string} rel @param {string | Buffer} [data] */
  const w = (rel, data = content) => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
    fs.writeFileSync(path.join(root, rel), data)
  }
  w(SHALLOW)
  w(DEEP)
  fs.symlinkSync("a/b/c/d", path.join(root, "linked"))
  for (let i = 0; i < 256; i++) w(`many/f${String(i).padStart(3, "0")}.txt`)
  for (let i = 0; i < dirEntries; i++) w(`list/e${i}.txt`, "x")
  // A source-like tree: 100 directories, a mix of .ts and other files, some nesting.
  for (let i = 0; i < globFiles; i++) {
    const dir = `src/m${i % 50}/d${Math.floor(i / 50) % 2}`
    w(`${dir}/f${i}.${i % 3 === 0 ? "js" : "ts"}`, "export {}\n")
  }
  fs.mkdirSync(path.join(root, "out"))
  const removeTemplate = () => {
    const dir = `trash-${process.hrtime.bigint()}`
    for (let i = 0; i < removeFiles; i++) w(`${dir}/s${i % 10}/r${i}.txt`, "x")
    return dir
  }
  return {
    base,
    root,
    removeTemplate,
    // rm -rf: a recursive fs.rm runs out of stack on the mkdirs chain scenario's 1,980 levels.
    cleanup: () => execFileSync("rm", ["-rf", base])
  }
}
