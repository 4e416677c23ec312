// A scratch tree for child processes and workers: a root with files, a directory, a link out, a
// hard link, and an outside directory with a secret whose survival every test checks.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

export const makeTree = () => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-lifetime-"))
  const root = path.join(base, "root")
  const outside = path.join(base, "outside")
  fs.mkdirSync(path.join(root, "dir", "sub"), { recursive: true })
  fs.mkdirSync(outside)
  fs.writeFileSync(path.join(outside, "secret.txt"), "TOP SECRET")
  fs.writeFileSync(path.join(root, "file.txt"), "hello")
  fs.writeFileSync(path.join(root, "dir", "sub", "deep.txt"), "deep")
  fs.symlinkSync(outside, path.join(root, "out"))
  fs.symlinkSync("file.txt", path.join(root, "inner-link"))
  fs.writeFileSync(path.join(root, "hard.txt"), "linked")
  fs.linkSync(path.join(root, "hard.txt"), path.join(root, "dir", "hard2.txt"))
  const secretIntact = () => {
    const names = fs.readdirSync(outside)
    return names.length === 1 && fs.readFileSync(path.join(outside, "secret.txt"), "utf8") === "TOP SECRET"
  }
  const dispose = () => fs.rmSync(base, { recursive: true, force: true })
  return { base, root, outside, secretIntact, dispose }
}

/** Open descriptors of this process (Linux). */
export const fdCount = () => fs.readdirSync("/proc/self/fd").length
