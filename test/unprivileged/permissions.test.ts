/**
 * Permission refusals, tested as an unprivileged caller: CI runs as root, and root passes every
 * permission check, so a test as root proves nothing here. Each case runs in a child process that
 * runs as `nobody` (uid/gid 65534) when the tests run as root, pins a scratch root it may read, and
 * answers the value or the error of each request. The kernel's EACCES/EPERM must come back as
 * PermissionDenied, and the files must be unchanged afterwards.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { reasonOf } from "../../src/internal/errors.ts"
import { strategies } from "../support/strategies.ts"

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const NOBODY = 65534
const asRoot = process.getuid?.() === 0

interface Answer {
  readonly ok: boolean
  readonly value?: unknown
  readonly code?: string
  readonly refusal?: string
  readonly uid: number
}

type Req = { readonly op: string; readonly path: string; readonly [k: string]: unknown }

/** Runs requests in a child as nobody; answers per request. */
const asNobody = (root: string, strategy: string, requests: ReadonlyArray<Req>): Array<Answer> => {
  const script = `
    const native = require(${JSON.stringify(path.join(repo, "node_modules/node-gyp-build"))})(${JSON.stringify(repo)})
    ;(async () => {
      const root = await native.pin(${JSON.stringify(root)}, ${JSON.stringify(strategy)})
      const out = []
      for (const r of ${JSON.stringify(requests)}) {
        const request = { ...r, op: native.ops[r.op] }
        if (typeof r.data === "string") request.data = Buffer.from(r.data)
        if (typeof r.flag === "string") request.flag = native.flags[r.flag]
        out.push(await root.execute(request).then(
          (value) => ({ ok: true, value: value instanceof Uint8Array ? Buffer.from(value).toString() : value === undefined ? null : typeof value === "object" ? "object" : value }),
          (e) => ({ ok: false, code: e.code, refusal: e.refusal })))
      }
      process.stdout.write(JSON.stringify(out.map((a) => ({ ...a, uid: process.getuid() }))))
    })()`
  const ids = asRoot ? { uid: NOBODY, gid: NOBODY } : {}
  const run = spawnSync(process.execPath, ["-e", script], { ...ids, encoding: "utf8" })
  expect(run.stderr).toBe("")
  return JSON.parse(run.stdout)
}

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

const cases: ReadonlyArray<{ readonly name: string; readonly op: string; readonly request: Req; readonly code: string }> = [
  { name: "a file under a directory without search permission is not read", op: "readFile", request: { op: "readFile", path: "locked/f.txt" }, code: "EACCES" },
  { name: "a file under a directory without search permission is not stat'ed", op: "stat", request: { op: "stat", path: "locked/f.txt" }, code: "EACCES" },
  { name: "a directory without read permission is not listed", op: "readDirectory", request: { op: "readDirectory", path: "locked" }, code: "EACCES" },
  { name: "a read-only file is not written", op: "writeFile", request: { op: "writeFile", path: "ro.txt", data: "overwritten", flag: "w" }, code: "EACCES" },
  { name: "a read-only file is not appended to", op: "writeFile", request: { op: "writeFile", path: "ro.txt", data: "appended", flag: "a" }, code: "EACCES" },
  { name: "a file nobody does not own is not chmod'ed", op: "chmod", request: { op: "chmod", path: "roots.txt", mode: 0o777 }, code: "EPERM" },
  { name: "a file nobody does not own is not chown'ed", op: "chown", request: { op: "chown", path: "roots.txt", uid: NOBODY, gid: NOBODY }, code: "EPERM" },
  { name: "nothing is created in a directory without write permission", op: "makeDirectory", request: { op: "makeDirectory", path: "locked/new" }, code: "EACCES" }
]

// What nobody may do, so the refusals above are refusals of permission and not of everything.
const allowed: ReadonlyArray<{ readonly op: string; readonly request: Req }> = [
  { op: "readFile", request: { op: "readFile", path: "open.txt" } },
  { op: "writeFile", request: { op: "writeFile", path: "nobodys.txt", data: "rewritten by its owner", flag: "w" } },
  { op: "chmod", request: { op: "chmod", path: "nobodys.txt", mode: 0o600 } },
  { op: "makeDirectory", request: { op: "makeDirectory", path: "made-by-nobody" } }
]

describe.each(strategies)("permission refusals as an unprivileged caller (%s)", (strategy) => {
  // One child per strategy runs every case against one tree: the refusals change nothing, and the
  // allowed requests touch only nobody's own entries.
  const refused = cases
  const permitted = allowed
  let answers: Array<Answer> = []
  let before: ReturnType<typeof fingerprint> = []
  let after: ReturnType<typeof fingerprint> = []
  beforeAll(() => {
    const { root, at } = tree()
    before = fingerprint(at)
    answers = asNobody(root, strategy, [...permitted, ...refused].map((c) => c.request))
    after = fingerprint(at)
  })

  it("runs the child unprivileged, and lets it do what it may (positive controls)", () => {
    expect(answers).toHaveLength(permitted.length + refused.length)
    for (const [i, c] of permitted.entries()) expect(answers[i], c.op).toMatchObject({ ok: true })
    expect(answers[0]).toMatchObject({ ok: true, value: "anyone may read" })
    if (asRoot) expect(answers[0]!.uid).toBe(NOBODY)
  })

  it.each(refused.map((c, i) => [c.name, c, i] as const))("%s", (_name, c, i) => {
    const answer = answers[permitted.length + i]!
    expect(answer.ok).toBe(false)
    expect(answer.code).toBe(c.code)
    expect(reasonOf(answer.code!, (answer.refusal ?? "") as never)).toBe("PermissionDenied")
  })

  it("leaves the refused files as they were (content, mode, owner)", () => {
    expect(after).toEqual(before)
  })
})
