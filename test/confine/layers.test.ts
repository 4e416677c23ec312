import { describe, expect, it } from "vitest"
import { bwrapArguments, encodeArguments } from "../../src/confine/bwrap.ts"
import { renderSandboxProfile } from "../../src/confine/index.ts"
import { planLayers, type LayerInput } from "../../src/confine/layers.ts"
import { beneath, joinRaw, rawOf, relativeTo, shown, within } from "../../src/confine/raw.ts"

const input = (over: Partial<LayerInput>): LayerInput => ({ mode: "confined", writable: [], restrictions: [], grants: [], ...over })
const summary = (l: ReturnType<typeof planLayers>) =>
  l.layers.map(
    (x) => `${x.op === "bind" ? (x.writable ? "rw" : "ro") : x.op === "mask-file" ? "mask-file" : `mask-${x.perms.toString(8)}`} ${x.path}`
  )

describe("the mount plan", () => {
  it("writable roots first (shallow first, nested ones dropped), then restrictions shallow first", () => {
    const l = planLayers(
      input({
        writable: [
          { path: "/w/tmp", slot: 0, why: "" },
          { path: "/w", slot: 1, why: "" },
          { path: "/t", slot: 2, why: "" }
        ],
        restrictions: [
          { path: "/w/a/.git", access: "read-only", type: "directory", slot: 3, why: "" },
          { path: "/w/.git", access: "read-only", type: "directory", slot: 4, why: "" },
          { path: "/h/.ssh", access: "inaccessible", type: "directory", slot: 5, why: "" },
          { path: "/w/.env", access: "inaccessible", type: "file", slot: 6, why: "" }
        ]
      })
    )
    expect(summary(l)).toEqual(["rw /t", "rw /w", "mask-0 /h/.ssh", "mask-file /w/.env", "ro /w/.git", "ro /w/a/.git"])
    expect([...l.unused].sort()).toEqual([0, 5, 6])
    expect(l.remountReadOnly).toEqual(["/h/.ssh"])
  })

  it("restrictions only narrow: read-only inside inaccessible is dropped, inaccessible inside read-only is applied", () => {
    const l = planLayers(
      input({
        restrictions: [
          { path: "/h/.ssh", access: "inaccessible", type: "directory", slot: 0, why: "" },
          { path: "/h/.ssh/known_hosts", access: "read-only", type: "file", slot: 1, why: "" },
          { path: "/w/.git", access: "read-only", type: "directory", slot: 2, why: "" },
          { path: "/w/.git/hooks", access: "inaccessible", type: "directory", slot: 3, why: "" }
        ],
        writable: [{ path: "/w", slot: 4, why: "" }]
      })
    )
    expect(summary(l)).toEqual(["rw /w", "mask-0 /h/.ssh", "ro /w/.git", "mask-0 /w/.git/hooks"])
  })

  it("a restriction with a writable root beneath it is applied even where it narrows nothing inherited (a scope file in .git stays read-only)", () => {
    // The workspace is not writable (a launch scope narrowed it): /w/.git inherits read-only from the
    // base, yet the single writable file beneath it must be covered again.
    const l = planLayers(
      input({
        writable: [
          { path: "/w/src/a.ts", slot: 0, why: "scope file" },
          { path: "/w/.git/config", slot: 1, why: "scope file" }
        ],
        restrictions: [
          { path: "/w/.git", access: "read-only", type: "directory", slot: 2, why: "" },
          { path: "/w/.vscode", access: "read-only", type: "directory", slot: 3, why: "" }
        ]
      })
    )
    expect(summary(l)).toEqual(["rw /w/.git/config", "rw /w/src/a.ts", "ro /w/.git"])
    expect([...l.unused].sort()).toEqual([3])
  })

  it("a grant on an ancestor comes first, so the protected paths beneath it are applied again on top", () => {
    const l = planLayers(
      input({
        restrictions: [{ path: "/h/.ssh", access: "inaccessible", type: "directory", slot: 0, why: "" }],
        grants: [{ path: "/h", access: "write", slot: 1, why: "g" }]
      })
    )
    expect(summary(l)).toEqual(["rw /h", "mask-0 /h/.ssh"])
  })

  it("a grant on the protected path itself comes after its restriction; a mask with anything beneath it can be traversed", () => {
    const l = planLayers(
      input({
        restrictions: [
          { path: "/h/.ssh", access: "inaccessible", type: "directory", slot: 0, why: "" },
          { path: "/w/.git/config", access: "read-only", type: "file", slot: 1, why: "" }
        ],
        grants: [
          { path: "/h/.ssh/known_hosts", access: "read", slot: 2, why: "g1" },
          { path: "/w/.git/config", access: "write", slot: 3, why: "g2" }
        ],
        writable: [{ path: "/w", slot: 4, why: "" }]
      })
    )
    expect(summary(l)).toEqual(["rw /w", "mask-111 /h/.ssh", "ro /h/.ssh/known_hosts", "ro /w/.git/config", "rw /w/.git/config"])
  })

  it("a grant that widens nothing is reported redundant and binds nothing", () => {
    const l = planLayers(
      input({
        writable: [{ path: "/w", slot: 0, why: "" }],
        grants: [
          { path: "/w/file", access: "write", slot: 1, why: "inside the workspace" },
          { path: "/etc/hosts", access: "read", slot: 2, why: "readable anyway" }
        ]
      })
    )
    expect(summary(l)).toEqual(["rw /w"])
    expect(l.redundantGrants).toEqual(["readable anyway", "inside the workspace"])
    expect([...l.unused].sort()).toEqual([1, 2])
  })

  it("full access: no writable layers; restrictions on a writable base; a write grant reopens one", () => {
    const l = planLayers(
      input({
        mode: "full-access",
        writable: [{ path: "/w", slot: 0, why: "" }],
        restrictions: [{ path: "/h/.aws", access: "read-only", type: "directory", slot: 1, why: "" }],
        grants: [{ path: "/h/.aws/config", access: "write", slot: 2, why: "" }]
      })
    )
    expect(summary(l)).toEqual(["ro /h/.aws", "rw /h/.aws/config"])
    expect(l.unused).toEqual([0])
  })
})

describe("renderings", () => {
  const layers = planLayers(
    input({
      writable: [{ path: "/w", slot: 0, why: "" }],
      restrictions: [
        { path: "/w/.git", access: "read-only", type: "directory", slot: 1, why: "" },
        { path: "/h/.ssh", access: "inaccessible", type: "directory", slot: 2, why: "" },
        { path: `/w/bad${"\xff"}.pem`, access: "inaccessible", type: "file", slot: 3, why: "" },
        { path: '/w/quo"te\\.key', access: "inaccessible", type: "file", slot: 4, why: "" }
      ]
    })
  )

  it("bubblewrap: fixed hardening, base, writable, restrictions, remounts, working directory", () => {
    const args = bwrapArguments({
      mode: "confined",
      network: "none",
      layers: layers.layers,
      remountReadOnly: layers.remountReadOnly,
      cwd: "/w"
    })
    expect(args).toEqual([
      "--die-with-parent",
      "--new-session",
      "--unshare-pid",
      "--unshare-ipc",
      "--unshare-net",
      "--cap-drop",
      "ALL",
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--proc",
      "/proc",
      "--bind-fd",
      { fd: 0 },
      "/w",
      "--perms",
      "0000",
      "--tmpfs",
      "/h/.ssh",
      "--ro-bind-fd",
      { fd: 1 },
      "/w/.git",
      "--perms",
      "0000",
      "--ro-bind-data",
      { empty: 0 },
      `/w/bad${"\xff"}.pem`,
      "--perms",
      "0000",
      "--ro-bind-data",
      { empty: 1 },
      '/w/quo"te\\.key',
      "--remount-ro",
      "/h/.ssh",
      "--chdir",
      "/w"
    ])
    // Bytes on the wire: NUL-separated, descriptors numbered, a name that is not UTF-8 unchanged.
    const bytes = encodeArguments(
      args,
      (slot) => 10 + slot,
      (k) => 20 + k
    )
    const parts = bytes.toString("latin1").split("\0")
    expect(parts.at(-1)).toBe("")
    expect(parts).toContain("10")
    expect(parts).toContain("21")
    expect(bytes.includes(Buffer.from([0x2f, 0x77, 0x2f, 0x62, 0x61, 0x64, 0xff, 0x2e]))).toBe(true)
  })

  it("sandbox-exec: the same layers as last-match-wins rules (untested on a Mac)", () => {
    const ok = planLayers(
      input({
        writable: [{ path: "/w", slot: 0, why: "" }],
        restrictions: [
          { path: "/w/.git", access: "read-only", type: "directory", slot: 1, why: "" },
          { path: '/w/quo"te\\.key', access: "inaccessible", type: "file", slot: 2, why: "" }
        ],
        grants: [{ path: "/w/.git/config", access: "write", slot: 3, why: "" }]
      })
    )
    expect(renderSandboxProfile({ mode: "confined", layers: ok.layers })).toBe(
      [
        "(version 1)",
        "(allow default)",
        '(deny file-write* (subpath "/"))',
        '(allow file-write* (literal "/dev/null") (literal "/dev/zero") (literal "/dev/dtracehelper") (regex #"^/dev/tty") (regex #"^/dev/fd/"))',
        '(allow file-read* file-write* (subpath "/w"))',
        '(allow file-read* (subpath "/w/.git"))',
        '(deny file-write* (subpath "/w/.git"))',
        '(deny file-read* file-write* (literal "/w/quo\\"te\\\\.key"))',
        '(allow file-read* file-write* (subpath "/w/.git/config"))',
        ""
      ].join("\n")
    )
    expect(() => renderSandboxProfile({ mode: "confined", layers: layers.layers })).toThrow(/UTF-8/)
  })
})

describe("raw paths", () => {
  it("shows bytes that are not UTF-8 as \\xNN, distinct from the same text typed", () => {
    expect(shown(rawOf("/w/é"))).toBe("/w/é")
    expect(shown("/w/\xff")).toBe("/w/\\xff")
    expect(shown(rawOf("/w/\\xff"))).toBe("/w/\\\\xff")
  })

  it("compares paths by components, with '/' as an anchor", () => {
    expect(within("/a/b", "/a")).toBe(true)
    expect(within("/ab", "/a")).toBe(false)
    expect(beneath("/a", "/a")).toBe(false)
    expect(within("/a", "/")).toBe(true)
    expect(relativeTo("/a/b", "/")).toBe("a/b")
    expect(relativeTo("/a", "/a")).toBe("")
    expect(joinRaw("/", "a")).toBe("/a")
    expect(joinRaw("/a", "")).toBe("/a")
  })
})
