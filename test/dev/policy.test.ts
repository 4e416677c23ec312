/**
 * The policy: full globs through picomatch, failing closed, and the mandatory deny set that no
 * configuration or hand-written policy lifts.
 */
import { describe, expect, it } from "vitest"
import { PinnedFsError } from "../../src/index.ts"
import { Policy, workspacePath } from "../../src/dev/index.ts"

const openAll: Policy.Policy = { canRead: () => true, canWrite: () => true }

describe("Policy.fromRules", () => {
  const p = Policy.fromRules({ read: ["**"], write: ["src/**/*.{ts,tsx}", "docs/*.md"], deny: ["**/secret*"] })

  it("compiles full globs: globstar, braces, single-segment stars, dot files", () => {
    expect(p.canWrite("src/a.ts")).toBe(true)
    expect(p.canWrite("src/deep/er/b.tsx")).toBe(true)
    expect(p.canWrite("src/a.js")).toBe(false)
    expect(p.canWrite("docs/x.md")).toBe(true)
    expect(p.canWrite("docs/sub/x.md")).toBe(false)
    expect(p.canRead(".env")).toBe(true) // `**` covers dot files: a scope must not silently skip them
    expect(p.canWrite("src/.hidden.ts")).toBe(true)
  })

  it("applies the caller's deny list to reads and writes, in any letter case", () => {
    expect(p.canRead("src/secret.ts")).toBe(false)
    expect(p.canWrite("src/SECRET.ts")).toBe(false)
  })

  it("matches names with line terminators in them like any other name", () => {
    for (const path of ["src/x\ny.ts", "src/p\u2028q.ts", "src/r\rs.tsx", "src/deep\u2029er/t.ts"]) {
      expect([path, p.canWrite(path)]).toEqual([path, true])
    }
    expect(p.canRead("src/secret\n.ts")).toBe(false)
  })

  it("always applies the mandatory deny set to writes, whatever the rules allow", () => {
    const all = Policy.fromRules({ read: ["**"], write: ["**"] })
    for (const path of [
      ".bashrc",
      "home/.bashrc",
      ".git/hooks",
      ".git/hooks/pre-commit",
      "sub/.git/hooks/x",
      ".vscode",
      ".vscode/settings.json",
      "a/.vscode/tasks.json",
      ".VSCode/settings.json",
      ".Git/Hooks/post-merge"
    ]) {
      expect([path, all.canWrite(path)]).toEqual([path, false])
      expect(Policy.isMandatoryDenied(path)).toBe(true)
    }
    expect(all.canWrite("vscode/settings.json")).toBe(true)
    expect(all.canRead(".vscode/settings.json")).toBe(true) // the set is about writing
  })

  it("matches the mandatory set by segment: no character in a folder name gets a path past it", () => {
    const lax: Policy.Policy = { canRead: () => true, canWrite: () => true }
    for (const path of [
      "a\nb/.vscode/tasks.json",
      "p\u2028q/.vscode/tasks.json",
      "sub\rrepo/.git/hooks/pre-commit",
      "h\u2029/.bashrc",
      "x\u0085y/.git/config",
      "\u001b[31m/.envrc",
      ".vſcode/tasks.json", // long s: the same name on a case-folding volume
      ".\u212Aeep/../.git" // Kelvin sign folds to k; '..' is not canonical but the .git segment is there
    ]) {
      expect([path, Policy.isMandatoryDenied(path)]).toEqual([path, true])
      expect([path, Policy.decide(lax, "write", path)?.reason]).toEqual([path, "PermissionDenied"])
    }
    expect(Policy.isMandatoryDenied("src/x\ny.ts")).toBe(false)
    expect(Policy.isMandatoryDenied("src/.gitignore")).toBe(false)
    expect(Policy.isMandatoryDenied("src/git/hooks.ts")).toBe(false)
    expect(Policy.isMandatoryDenied("src/.bashrc.ts")).toBe(false) // a name entry covers that name only
  })

  it("denies every entry of the extended set, each with its reason", () => {
    const paths = [
      ".git",
      ".git/config",
      "vendor/lib/.git/info/attributes",
      ".hg/hgrc",
      ".husky/pre-commit",
      ".vscode/tasks.json",
      ".idea/workspace.xml",
      ".devcontainer/devcontainer.json",
      ".config/git/config",
      ".config/fish/conf.d/x.fish",
      "home/.gitconfig",
      ".gitmodules",
      "deep/er/.envrc",
      ".npmrc",
      ".yarnrc",
      ".yarnrc.yml",
      ".pnpmfile.cjs",
      "pinnedfs.config.js",
      "pinnedfs.config.json",
      "config.fish",
      ...[".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases", ".profile", ".zshrc", ".zprofile"],
      ...[".zshenv", ".zlogin", ".zlogout", ".cshrc", ".tcshrc", ".login", ".logout", ".kshrc", ".mkshrc"],
      ...[".xprofile", ".xinitrc", ".xsession", ".xsessionrc"]
    ]
    expect(Policy.mandatoryEntries.length).toBe(paths.length - 2) // .git three times: one entry
    for (const path of paths) {
      const e = Policy.decide(openAll, "write", path)
      expect([path, e?.reason]).toEqual([path, "PermissionDenied"])
      expect(e?.description).toMatch(/mandatory deny set, never written: '.+': \w/)
    }
  })

  it("refuses malformed rules with a typed error", () => {
    expect(() => Policy.fromRules({ read: "**" as never, write: [] })).toThrow(PinnedFsError)
    expect(() => Policy.fromRules({ read: ["/etc/**"], write: [] })).toThrow(/absolute/)
    expect(() => Policy.fromRules({ read: ["!src/**"], write: [] })).toThrow(/negated/)
    // An extglob is not a negation: it covers every name but the ones it lists.
    const ext = Policy.fromRules({ read: ["!(*.min).js", "src/!(gen)/**"], write: [] })
    expect([ext.canRead("a.js"), ext.canRead("a.min.js"), ext.canRead("src/lib/x.ts"), ext.canRead("src/gen/x.ts")]).toEqual([
      true,
      false,
      true,
      false
    ])
    expect(() => Policy.fromRules({ read: ["../**"], write: [] })).toThrow(/'\.\.'/)
  })
})

describe("Policy.decide fails closed", () => {
  it("refuses when no policy is in force", () => {
    const e = Policy.decide(undefined, "read", "a.ts")
    expect(e?.reason).toBe("PermissionDenied")
    expect(e?.description).toMatch(/no policy is in force/)
  })

  it("refuses when the policy throws or answers anything but true", () => {
    const throwing: Policy.Policy = {
      canRead: () => {
        throw new Error("rules not loaded")
      },
      canWrite: () => true
    }
    expect(Policy.decide(throwing, "read", "a.ts")?.description).toMatch(/failed while deciding.*rules not loaded/)
    const vague = { canRead: () => undefined, canWrite: () => 1 } as unknown as Policy.Policy
    expect(Policy.decide(vague, "read", "a.ts")?.description).toMatch(/gave no decision/)
    expect(Policy.decide(vague, "write", "a.ts")?.description).toMatch(/gave no decision/)
    expect(Policy.decide({ canRead: () => true, canWrite: () => true }, "read", "a.ts")).toBeUndefined()
  })

  it("applies the mandatory deny set over a hand-written policy that allows everything", () => {
    const lax: Policy.Policy = { canRead: () => true, canWrite: () => true }
    expect(Policy.decide(lax, "write", ".git/hooks/pre-commit")?.description).toMatch(/mandatory deny set/)
    expect(Policy.decide(lax, "write", "x/.vscode/settings.json")?.reason).toBe("PermissionDenied")
    expect(Policy.decide(lax, "write", "src/a.ts")).toBeUndefined()
  })
})

describe("workspacePath", () => {
  it("canonicalizes . segments, repeated and trailing slashes", () => {
    expect(workspacePath("./src//a.ts")).toBe("src/a.ts")
    expect(workspacePath("src/./b/")).toBe("src/b")
  })

  it("refuses a leading '/', saying why", () => {
    const e = (() => {
      try {
        workspacePath("/etc/passwd")
      } catch (e) {
        return e as PinnedFsError
      }
    })()
    expect(e).toBeInstanceOf(PinnedFsError)
    expect(e?.reason).toBe("BadArgument")
    expect(e?.description).toMatch(/absolute.*leading '\/' is refused because it is almost always a host path/)
  })

  it("refuses '..', NUL, the root itself and non-strings", () => {
    expect(() => workspacePath("src/../.vscode/x")).toThrow(/'\.\.'/)
    expect(() => workspacePath("a\0b")).toThrow(/NUL/)
    expect(() => workspacePath("./")).toThrow(/workspace root/)
    expect(() => workspacePath("")).toThrow(/workspace root/)
    expect(() => workspacePath(3)).toThrow(/must be a string/)
  })
})
