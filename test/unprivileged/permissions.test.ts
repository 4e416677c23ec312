/**
 * Permission refusals, tested as an unprivileged caller: CI runs as root, and root passes every
 * permission check, so a test as root proves nothing here. Each case runs in a child process that
 * runs as `nobody` (uid/gid 65534) when the tests run as root, pins a scratch root it may read, and
 * answers the value or the error of each call, made through PinnedRoot as a user makes it. The
 * kernel's EACCES/EPERM must come back as PermissionDenied, and the files must be unchanged afterwards.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { asRoot, callsAsNobody, NOBODY, type NobodyAnswer } from "../support/nobody.ts"
import { strategies } from "../support/strategies.ts"

type Call = { readonly method: string; readonly args: ReadonlyArray<unknown> }

const made: Array<string> = []
afterAll(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

/** A tree nobody may enter and read, with the traps it must be refused at. */
const tree = () => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-unpriv-"))
  made.push(base)
  fs.chmodSync(base, 0o755)
  const root = path.join(base, "root")
  const at = (rel: string) => path.join(root, rel)
  fs.mkdirSync(root, { mode: 0o755 })
  fs.chmodSync(root, 0o777) // nobody may create entries at the top (positive controls)
  fs.writeFileSync(at("open.txt"), "anyone may read")
  fs.mkdirSync(at("locked"))
  fs.writeFileSync(at("locked/f.txt"), "behind a directory without search permission")
  fs.chmodSync(at("locked"), 0o700) // owned by root: no search, no read for nobody
  fs.writeFileSync(at("ro.txt"), "read only")
  fs.chmodSync(at("ro.txt"), 0o444)
  fs.writeFileSync(at("roots.txt"), "owned by root")
  fs.chmodSync(at("roots.txt"), 0o666) // writable by nobody, but not nobody's to chmod or chown
  fs.writeFileSync(at("nobodys.txt"), "owned by nobody")
  if (asRoot) fs.chownSync(at("nobodys.txt"), NOBODY, NOBODY)
  return { root, at }
}

/** Content, mode and owner of the files a refusal must leave as they were. */
const fingerprint = (at: (rel: string) => string) =>
  ["locked", "locked/f.txt", "ro.txt", "roots.txt"].map((rel) => {
    const st = fs.lstatSync(at(rel))
    return { rel, mode: st.mode, uid: st.uid, gid: st.gid, body: st.isFile() ? fs.readFileSync(at(rel), "utf8") : "" }
  })

const cases: ReadonlyArray<{ readonly name: string; readonly call: Call; readonly code: string }> = [
  {
    name: "a file under a directory without search permission is not read",
    call: { method: "readFile", args: ["locked/f.txt"] },
    code: "EACCES"
  },
  {
    name: "a file under a directory without search permission is not stat'ed",
    call: { method: "stat", args: ["locked/f.txt"] },
    code: "EACCES"
  },
  { name: "a directory without read permission is not listed", call: { method: "readDirectory", args: ["locked"] }, code: "EACCES" },
  { name: "a read-only file is not written", call: { method: "writeFileString", args: ["ro.txt", "overwritten"] }, code: "EACCES" },
  {
    name: "a read-only file is not appended to",
    call: { method: "writeFileString", args: ["ro.txt", "appended", { flag: "a" }] },
    code: "EACCES"
  },
  { name: "a file nobody does not own is not chmod'ed", call: { method: "chmod", args: ["roots.txt", 0o777] }, code: "EPERM" },
  { name: "a file nobody does not own is not chown'ed", call: { method: "chown", args: ["roots.txt", NOBODY, NOBODY] }, code: "EPERM" },
  {
    name: "nothing is created in a directory without write permission",
    call: { method: "makeDirectory", args: ["locked/new"] },
    code: "EACCES"
  },
  // Node's copyFile opens the destination for writing; a replacement must not do what that open may not.
  { name: "a read-only file is not replaced by copyFile", call: { method: "copyFile", args: ["open.txt", "ro.txt"] }, code: "EACCES" },
  { name: "a read-only file is not replaced by cp", call: { method: "cp", args: ["open.txt", "ro.txt", { force: true }] }, code: "EACCES" }
]

// What nobody may do, so the refusals above are refusals of permission and not of everything.
const allowed: ReadonlyArray<Call> = [
  { method: "readFileString", args: ["open.txt"] },
  { method: "writeFileString", args: ["nobodys.txt", "rewritten by its owner"] },
  { method: "chmod", args: ["nobodys.txt", 0o600] },
  { method: "makeDirectory", args: ["made-by-nobody"] },
  { method: "copyFile", args: ["open.txt", "copied-by-nobody.txt"] }
]

describe.each(strategies)("permission refusals as an unprivileged caller (%s)", (strategy) => {
  // One child per strategy runs every case against one tree: the refusals change nothing, and the
  // allowed requests touch only nobody's own entries.
  const refused = cases
  const permitted = allowed
  let answers: Array<NobodyAnswer> = []
  let before: ReturnType<typeof fingerprint> = []
  let after: ReturnType<typeof fingerprint> = []
  beforeAll(() => {
    const { root, at } = tree()
    before = fingerprint(at)
    answers = callsAsNobody(root, strategy, [...permitted, ...refused.map((c) => c.call)])
    after = fingerprint(at)
  })

  it("runs the child unprivileged, and lets it do what it may (positive controls)", () => {
    expect(answers).toHaveLength(permitted.length + refused.length)
    for (const [i, c] of permitted.entries()) expect(answers[i], c.method).toMatchObject({ ok: true })
    expect(answers[0]).toMatchObject({ ok: true, value: "anyone may read" })
    if (asRoot) expect(answers[0]!.uid).toBe(NOBODY)
  })

  it.each(refused.map((c, i) => [c.name, c, i] as const))("%s", (_name, c, i) => {
    // The reason is the library's, made in the child: a plain errno (no refusal of ours) that
    // Effect's vocabulary calls PermissionDenied.
    expect(answers[permitted.length + i]).toEqual({
      ok: false,
      code: c.code,
      refusal: "",
      reason: "PermissionDenied",
      uid: answers[0]!.uid
    })
  })

  it("leaves the refused files as they were (content, mode, owner)", () => {
    expect(after).toEqual(before)
  })
})
