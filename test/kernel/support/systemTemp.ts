/**
 * The "system temporary directory" of a test: `TMPDIR` pointed inside a scratch tree, so that what a
 * temporary-file method (or an escape from one) reaches stays in the tree, never the machine's /tmp.
 * Registers hooks that restore `TMPDIR` after every test of the file that calls it.
 */
import * as NFS from "node:fs"
import * as NPath from "node:path"
import { afterEach, beforeEach } from "vitest"

export const scratchSystemTemp = (): ((base: string) => string) => {
  let saved: string | undefined
  beforeEach(() => {
    saved = process.env["TMPDIR"]
  })
  afterEach(() => {
    if (saved === undefined) delete process.env["TMPDIR"]
    else process.env["TMPDIR"] = saved
  })
  /** Makes `<base>/systmp` and points `TMPDIR` at it. */
  return (base) => {
    const systmp = NPath.join(base, "systmp")
    NFS.mkdirSync(systmp)
    process.env["TMPDIR"] = systmp
    return systmp
  }
}
