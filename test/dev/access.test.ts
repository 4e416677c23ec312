/**
 * DevFileAccess, method by method: the envelope (allowlist, create authorization, withheld
 * paths), the policy axis of each method, paths refused before anything is touched, path safety
 * from pinnedfs itself (a link is never followed), parents created shallowest first, each checked,
 * through one mkdirs trip. Under both resolve strategies.
 */
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { DevFileAccess, type DevFileAccessOptions, Policy } from "../../src/dev/index.ts"
import { noTestHooks, testHooks, trips } from "../support/hooks.ts"
import { skipUnless } from "../support/skip.ts"
import { strategies } from "../support/strategies.ts"
import { disk, openPolicy, rejection, setup } from "./support/workspace.ts"

const files = {
  "src/a.ts": "const a = 1\n",
  "src/b.ts": "const b = 2\n",
  "src/other.ts": "not yours\n",
  "notes/secret.md": "secret\n"
}

describe.each(strategies)("DevFileAccess (%s)", (strategy) => {
  const make = async (options: Partial<DevFileAccessOptions> = {}, extra: Record<string, string> = {}) => {
    const { s, root } = await setup(strategy, { ...files, ...extra })
    const access = DevFileAccess.make({
      root,
      policy: openPolicy,
      allowlist: ["src/a.ts", "src/b.ts"],
      mayCreate: ["src/gen/**"],
      ...options
    })
    return { s, root, access }
  }

  describe("read: allowlist, canRead AND canWrite", () => {
    it("reads an allowlisted file as text", async () => {
      const { access } = await make()
      expect(await access.read("src/a.ts")).toBe("const a = 1\n")
      expect(await access.read("./src//a.ts")).toBe("const a = 1\n")
      expect(access.scope).toEqual(["src/a.ts", "src/b.ts"])
    })

    it("refuses a file outside the allowlist, though it exists and the policy allows it", async () => {
      const { access } = await make()
      const e = await rejection(access.read("src/other.ts"))
      expect([e.reason, e.syscall]).toEqual(["PermissionDenied", "allowlist"])
      expect(access.journal().refusals.map((r) => [r.method, r.path])).toEqual([["read", "src/other.ts"]])
    })

    it("needs canRead as well as canWrite", async () => {
      const { access } = await make({ policy: Policy.fromRules({ read: [], write: ["**"] }) })
      expect((await rejection(access.read("src/a.ts"))).description).toMatch(/does not allow reading/)
    })

    it("needs canWrite as well as canRead", async () => {
      const { access } = await make({ policy: Policy.fromRules({ read: ["**"], write: [] }) })
      expect((await rejection(access.read("src/a.ts"))).description).toMatch(/does not allow writing/)
    })

    it("refuses every method when no policy is in force", async () => {
      const { access } = await make({ policy: undefined })
      for (const attempt of [
        access.read("src/a.ts"),
        access.write("src/a.ts", "x"),
        access.delete("src/a.ts"),
        access.exists("src/a.ts"),
        access.rename("src/a.ts", "src/b.ts")
      ]) {
        expect((await rejection(attempt)).description).toMatch(/no policy is in force/)
      }
      expect((await rejection(access.mkdir("src/gen/x"))).description).toMatch(/no policy is in force/)
    })

    it("refuses a link planted at an allowlisted path, never reading what it names", async () => {
      const { s, access } = await make()
      fs.rmSync(s.abs("src/a.ts"))
      fs.symlinkSync(s.secret, s.abs("src/a.ts"))
      const e = await rejection(access.read("src/a.ts"))
      expect([e.reason, e.refusal]).toEqual(["PermissionDenied", "symlink"])
    })

    it("refuses a link on the way to an allowlisted path", async () => {
      const { s, access } = await make()
      fs.renameSync(s.abs("src"), s.abs("src-real"))
      fs.symlinkSync(s.abs("src-real"), s.abs("src"))
      expect((await rejection(access.read("src/a.ts"))).refusal).toBe("symlink")
    })

    it("refuses binary content and content over the size limit", async () => {
      const { s, access } = await make({ maxFileBytes: 64 })
      fs.writeFileSync(s.abs("src/a.ts"), Buffer.from([0x61, 0, 0x62]))
      expect((await rejection(access.read("src/a.ts"))).reason).toBe("InvalidData")
      fs.writeFileSync(s.abs("src/b.ts"), "x".repeat(65))
      expect((await rejection(access.read("src/b.ts"))).refusal).toBe("toolarge")
    })
  })

  describe("paths refused before anything is touched", () => {
    it("refuses a leading '/' with a message saying why, and records it", async () => {
      const { access } = await make()
      for (const attempt of [
        access.read("/src/a.ts"),
        access.write("/etc/passwd", "x"),
        access.exists("/src/a.ts"),
        access.delete("/src/a.ts"),
        access.mkdir("/tmp/x")
      ]) {
        const e = await rejection(attempt)
        expect(e.reason).toBe("BadArgument")
        expect(e.description).toMatch(/leading '\/' is refused because it is almost always a host path leaking in/)
      }
      expect(access.journal().refusals).toHaveLength(5)
    })

    it("refuses '..' and a non-string path", async () => {
      const { access } = await make()
      expect((await rejection(access.read("src/../src/a.ts"))).reason).toBe("BadArgument")
      expect((await rejection(access.write(42 as never, "x"))).reason).toBe("BadArgument")
      expect((await rejection(access.write("src/a.ts", Buffer.from("x") as never))).description).toMatch(/content must be a string/)
      expect((await rejection(access.rename("src/a.ts", null as never))).reason).toBe("BadArgument")
    })

    it("refuses every method on a path withheld as dirty", async () => {
      const { access } = await make({ withheld: ["src/a.ts"], allowlist: ["src/b.ts"] })
      for (const attempt of [
        access.read("src/a.ts"),
        access.write("src/a.ts", "x"),
        access.exists("src/a.ts"),
        access.delete("src/a.ts")
      ]) {
        expect((await rejection(attempt)).description).toMatch(/withheld/)
      }
    })

    it("refuses everything once the invocation has ended", async () => {
      const { access } = await make()
      access.close()
      expect((await rejection(access.read("src/a.ts"))).description).toMatch(/came after the capability returned: refused, nothing done/)
    })
  })

  describe("exists: allowlist or create authorization", () => {
    it("answers for an allowlisted file and for an absent path it may create", async () => {
      const { access } = await make()
      expect(await access.exists("src/a.ts")).toBe(true)
      expect(await access.exists("src/gen/new.ts")).toBe(false)
      expect(await access.exists("src/gen/a/b/c.ts")).toBe(false)
    })

    it("throws, rather than answering false, for a path it may not know about", async () => {
      const { access } = await make()
      const e = await rejection(access.exists("src/other.ts"))
      expect([e.reason, e.syscall]).toEqual(["PermissionDenied", "allowlist"])
      expect((await rejection(access.exists("nothing/here.ts"))).reason).toBe("PermissionDenied")
    })

    it("throws on a policy refusal (the mandatory deny set)", async () => {
      const { access } = await make({ mayCreate: [".vscode/**"] })
      expect((await rejection(access.exists(".vscode/settings.json"))).description).toMatch(/mandatory deny set/)
    })

    it("answers true for a link at the path (its target is never looked at)", async () => {
      const { s, access } = await make()
      fs.mkdirSync(s.abs("src/gen"))
      fs.symlinkSync("/nonexistent/target", s.abs("src/gen/link.ts"))
      expect(await access.exists("src/gen/link.ts")).toBe(true)
    })

    it("throws on a link on the way: a containment refusal", async () => {
      const { s, access } = await make()
      fs.symlinkSync(s.outside, s.abs("src/gen"))
      expect((await rejection(access.exists("src/gen/secret.txt"))).refusal).toBe("symlink")
    })

    it("answers false below a file (not a directory)", async () => {
      const { access } = await make({ mayCreate: ["src/a.ts/**"] })
      expect(await access.exists("src/a.ts/x")).toBe(false)
    })
  })

  describe("write / delete / mkdir: canWrite", () => {
    it("replaces an allowlisted file", async () => {
      const { s, access } = await make()
      await access.write("src/a.ts", "const a = 10\n")
      expect(disk(s, "src/a.ts")).toBe("const a = 10\n")
      expect(access.journal().written).toEqual(["src/a.ts"])
    })

    it("refuses an allowlisted file the policy does not let it write", async () => {
      const { s, access } = await make({ policy: Policy.fromRules({ read: ["**"], write: ["src/b.ts"] }) })
      expect((await rejection(access.write("src/a.ts", "x"))).syscall).toBe("policy")
      expect(disk(s, "src/a.ts")).toBe("const a = 1\n")
    })

    it("creates a file a mayCreate glob allows, and may then rewrite and delete it", async () => {
      const { s, access } = await make({ mayCreate: ["src/new.ts"] })
      await access.write("src/new.ts", "one\n")
      await access.write("src/new.ts", "two\n")
      expect(disk(s, "src/new.ts")).toBe("two\n")
      expect(access.journal().created).toEqual(["src/new.ts"])
      await access.delete("src/new.ts")
      expect(disk(s, "src/new.ts")).toBeUndefined()
    })

    it("refuses to create over an existing file outside the allowlist, leaving it intact", async () => {
      const { s, access } = await make({ mayCreate: ["src/*.ts"] })
      const e = await rejection(access.write("src/other.ts", "overwritten"))
      expect(e.description).toMatch(/exists and is not in this step's allowlist/)
      expect(disk(s, "src/other.ts")).toBe("not yours\n")
    })

    it("refuses a file neither allowlisted nor creatable", async () => {
      const { s, access } = await make()
      expect((await rejection(access.write("lib/x.ts", "x"))).description).toMatch(/no mayCreate glob/)
      expect(disk(s, "lib/x.ts")).toBeUndefined()
    })

    it("refuses the mandatory deny set even when mayCreate names it", async () => {
      const { s, access } = await make({ mayCreate: [".vscode/**", ".git/hooks/*", "**/.bashrc"] })
      for (const p of [".vscode/settings.json", ".git/hooks/pre-commit", "home/.bashrc"]) {
        expect((await rejection(access.write(p, "x"))).description).toMatch(/mandatory deny set/)
      }
      expect(fs.existsSync(s.abs(".vscode"))).toBe(false)
      expect(fs.existsSync(s.abs(".git"))).toBe(false)
    })

    it("writes over a link planted at an allowlisted path without writing through it", async () => {
      const { s, access } = await make()
      fs.rmSync(s.abs("src/a.ts"))
      fs.symlinkSync(s.secret, s.abs("src/a.ts"))
      await access.write("src/a.ts", "replaced").catch(() => undefined)
      expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
    })

    it("deletes an allowlisted file and refuses one outside the allowlist", async () => {
      const { s, access } = await make()
      await access.delete("src/b.ts")
      expect(disk(s, "src/b.ts")).toBeUndefined()
      expect((await rejection(access.delete("src/other.ts"))).syscall).toBe("allowlist")
      expect(disk(s, "src/other.ts")).toBe("not yours\n")
    })

    it("deletes a link itself, never what it names", async () => {
      const { s, access } = await make()
      fs.rmSync(s.abs("src/a.ts"))
      fs.symlinkSync(s.secret, s.abs("src/a.ts"))
      await access.delete("src/a.ts")
      expect(fs.existsSync(s.secret)).toBe(true)
    })

    it("refuses delete when canWrite is refused", async () => {
      const { s, access } = await make({ policy: Policy.fromRules({ read: ["**"], write: ["src/a.ts"] }) })
      expect((await rejection(access.delete("src/b.ts"))).syscall).toBe("policy")
      expect(disk(s, "src/b.ts")).toBe("const b = 2\n")
    })

    it("makes a directory a mayCreate glob needs, refuses one it does not", async () => {
      const { s, access } = await make()
      await access.mkdir("src/gen/deep")
      expect(fs.statSync(s.abs("src/gen/deep")).isDirectory()).toBe(true)
      expect(fs.statSync(s.abs("src/gen")).mode & 0o777).toBe(0o755)
      expect(access.journal().directories).toEqual(["src/gen", "src/gen/deep"])
      expect((await rejection(access.mkdir("lib"))).description).toMatch(/not needed by any mayCreate glob/)
      expect(fs.existsSync(s.abs("lib"))).toBe(false)
    })

    it("refuses mkdir where canWrite is refused", async () => {
      const { s, access } = await make({ mayCreate: ["**"], policy: Policy.fromRules({ read: ["**"], write: ["src/**"] }) })
      expect((await rejection(access.mkdir("lib/x"))).syscall).toBe("policy")
      expect(fs.existsSync(s.abs("lib"))).toBe(false)
    })

    it("refuses every mutation in an inspection", async () => {
      const { s, access } = await make({ readOnly: true })
      expect(await access.read("src/a.ts")).toBe("const a = 1\n")
      for (const attempt of [
        access.write("src/a.ts", "x"),
        access.delete("src/a.ts"),
        access.rename("src/a.ts", "src/b.ts"),
        access.mkdir("src/gen")
      ]) {
        expect((await rejection(attempt)).syscall).toBe("inspection")
      }
      expect(disk(s, "src/a.ts")).toBe("const a = 1\n")
    })
  })

  describe("rename: canWrite on both ends", () => {
    it("renames an allowlisted file onto an absent creatable path, and records the destination", async () => {
      const { s, access } = await make()
      await access.rename("src/a.ts", "src/gen/a.ts")
      expect(disk(s, "src/gen/a.ts")).toBe("const a = 1\n")
      expect(disk(s, "src/a.ts")).toBeUndefined()
      expect(access.journal().renamed).toEqual([{ from: "src/a.ts", to: "src/gen/a.ts" }])
    })

    it("renames onto another allowlisted file", async () => {
      const { s, access } = await make()
      await access.rename("src/a.ts", "src/b.ts")
      expect(disk(s, "src/b.ts")).toBe("const a = 1\n")
    })

    it("refuses a destination that exists outside the allowlist", async () => {
      const { s, access } = await make({ mayCreate: ["src/*.ts"] })
      expect((await rejection(access.rename("src/a.ts", "src/other.ts"))).description).toMatch(/exists and is not in this step's allowlist/)
      expect(disk(s, "src/other.ts")).toBe("not yours\n")
      expect(disk(s, "src/a.ts")).toBe("const a = 1\n")
    })

    it("refuses when canWrite refuses the destination", async () => {
      const { s, access } = await make({ policy: Policy.fromRules({ read: ["**"], write: ["src/a.ts", "src/b.ts"] }) })
      expect((await rejection(access.rename("src/a.ts", "src/gen/a.ts"))).syscall).toBe("policy")
      expect(disk(s, "src/a.ts")).toBe("const a = 1\n")
    })

    it("refuses when canWrite refuses the source", async () => {
      const { s, access } = await make({ policy: Policy.fromRules({ read: ["**"], write: ["src/b.ts", "src/gen/**"] }) })
      expect((await rejection(access.rename("src/a.ts", "src/gen/a.ts"))).syscall).toBe("policy")
      expect(disk(s, "src/a.ts")).toBe("const a = 1\n")
    })

    it("refuses a source outside the allowlist", async () => {
      const { access } = await make()
      expect((await rejection(access.rename("src/other.ts", "src/gen/o.ts"))).syscall).toBe("allowlist")
    })
  })

  describe("missing parents: shallowest first, each checked, one mkdirs trip", () => {
    const recording = (allow: (p: string) => boolean) => {
      const asked: Array<string> = []
      const policy: Policy.Policy = {
        canRead: () => true,
        canWrite: (p) => {
          asked.push(p)
          return allow(p)
        }
      }
      return { asked, policy }
    }

    it("creates every missing parent, checking each shallowest first, in one mkdirs trip", async (ctx) => {
      skipUnless(ctx, testHooks, noTestHooks)
      const { asked, policy } = recording(() => true)
      const { s, access } = await make({ policy })
      const before = trips()
      await access.write("src/gen/a/b/x.ts", "x\n")
      // The write tried once (parent missing), the mkdirs program, the write again.
      expect(trips() - before).toBe(3)
      expect(asked.filter((p) => p.startsWith("src/gen"))).toEqual(["src/gen/a/b/x.ts", "src/gen", "src/gen/a", "src/gen/a/b"])
      expect(disk(s, "src/gen/a/b/x.ts")).toBe("x\n")
      expect(access.journal().directories).toEqual(["src/gen", "src/gen/a", "src/gen/a/b"])
    })

    it("creates nothing when a deeper component is refused", async () => {
      const { policy } = recording((p) => p !== "src/gen/a")
      const { s, access } = await make({ policy })
      const e = await rejection(access.write("src/gen/a/b/x.ts", "x\n"))
      expect(e.path).toBe("src/gen/a")
      expect(fs.existsSync(s.abs("src/gen"))).toBe(false)
    })

    it("needs no decision on a parent that already exists", async () => {
      const { s, access } = await make({ policy: Policy.fromRules({ read: ["**"], write: ["src/gen/**"] }) })
      await access.write("src/gen/x.ts", "x\n") // `src` exists and is not writable: not created, not asked
      expect(disk(s, "src/gen/x.ts")).toBe("x\n")
    })

    it("refuses to create parents outside what mayCreate needs", async () => {
      const { s, access } = await make({ mayCreate: ["src/gen/*.ts", "src/elsewhere/x.ts"] })
      await access.write("src/elsewhere/x.ts", "x")
      expect(disk(s, "src/elsewhere/x.ts")).toBe("x")
      expect((await rejection(access.write("src/gen/sub/x.ts", "x"))).syscall).toBe("allowlist")
    })

    it("refuses a link where a parent should be created, and leaves the outside alone", async () => {
      const { s, access } = await make()
      fs.symlinkSync(s.outside, s.abs("src/gen"))
      expect((await rejection(access.write("src/gen/planted.ts", "x"))).refusal).toBe("symlink")
      expect(fs.readdirSync(s.outside)).toEqual(["secret.txt"])
    })
  })

  it("records refusals an engine swallows, so its step is still reported", async () => {
    const { access } = await make()
    await access.write("../../etc/passwd", "x").catch(() => undefined)
    await access.read("notes/secret.md").catch(() => undefined)
    expect(access.journal().refusals.map((r) => [r.method, r.path, r.error.reason])).toEqual([
      ["write", "../../etc/passwd", "BadArgument"],
      ["read", "notes/secret.md", "PermissionDenied"]
    ])
  })
})
