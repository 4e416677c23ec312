/**
 * `edit_file` is compare-and-swap: the edit replaces the version of the file it was computed from,
 * or nothing. A concurrent writer that changes the file between the read and the publish keeps its
 * bytes and the call fails with the "changed while it was being edited" text. The change is made
 * deterministically just before the call that publishes (the pinned handle's `execute`, the one
 * call edit_file makes that changes the disk); each case asserts it was made. In process, under
 * both resolve strategies.
 */
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { fromArguments } from "../../src/mcp/allowed.ts"
import type { Context } from "../../src/mcp/context.ts"
import { editFile } from "../../src/mcp/writes.ts"
import type { NativeRootHandle } from "../../src/internal/native.ts"
import { strategies } from "../support/strategies.ts"
import { scratch } from "../support/tree.ts"

const editing = async (strategy: (typeof strategies)[number], meddle: ((file: string) => void) | undefined) => {
  const s = scratch()
  s.make({ "notes.md": "alpha\nbeta\n" })
  const dirs = await fromArguments([s.root], { strategy, warn: () => undefined })
  const handle = dirs.spellings[0]!.root.handle
  let fired = false
  const execute = handle.execute.bind(handle)
  const meddling: NativeRootHandle["execute"] = (request, verify) => {
    if (meddle && !fired) {
      fired = true
      meddle(s.abs("notes.md"))
    }
    return execute(request, verify)
  }
  // The addon's method is read-only on its prototype: the instance gets its own.
  Object.defineProperty(handle, "execute", { value: meddling, configurable: true })
  const ctx: Context = { allowed: () => dirs, sync: false, maxEntries: 1000 }
  const edit = () => editFile(ctx, { path: s.abs("notes.md"), edits: [{ oldText: "beta", newText: "gamma" }], dryRun: false })
  return { s, dirs, edit, fired: () => fired }
}

describe.each(strategies)("edit_file compare-and-swap (%s)", (strategy) => {
  it("a writer that changes the file between the read and the publish keeps its bytes, and the edit fails", async () => {
    const { s, dirs, edit, fired } = await editing(strategy, (file) => fs.appendFileSync(file, "the other writer's line\n"))
    try {
      await expect(edit()).rejects.toThrow(/changed while it was being edited; nothing was written/)
      expect(fired()).toBe(true)
      expect(fs.readFileSync(s.abs("notes.md"), "utf8")).toBe("alpha\nbeta\nthe other writer's line\n")
      expect(fs.readdirSync(s.root)).toEqual(["notes.md"])
    } finally {
      dirs.close()
    }
  })

  it("a writer that replaces the file by a rename between the read and the publish keeps it", async () => {
    const { s, dirs, edit, fired } = await editing(strategy, (file) => {
      fs.writeFileSync(`${file}.tmp`, "alpha\nbeta\n")
      fs.renameSync(`${file}.tmp`, file)
    })
    try {
      await expect(edit()).rejects.toThrow(/changed while it was being edited/)
      expect(fired()).toBe(true)
      expect(fs.readFileSync(s.abs("notes.md"), "utf8")).toBe("alpha\nbeta\n")
    } finally {
      dirs.close()
    }
  })

  it("with no one else writing, the edit is published (the control)", async () => {
    const { s, dirs, edit } = await editing(strategy, undefined)
    try {
      fs.chmodSync(s.abs("notes.md"), 0o640)
      await edit()
      expect(fs.readFileSync(s.abs("notes.md"), "utf8")).toBe("alpha\ngamma\n")
      expect(fs.statSync(s.abs("notes.md")).mode & 0o777).toBe(0o640)
      expect(fs.readdirSync(s.root)).toEqual(["notes.md"])
    } finally {
      dirs.close()
    }
  })
})
