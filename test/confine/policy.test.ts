import { describe, expect, it } from "vitest"
import { compilePolicy, ConfinementError, defaultRules } from "../../src/confine/index.ts"
import { determinablePath, isLiteral } from "../../src/confine/policy.ts"

const invalid = (f: () => unknown, pattern: RegExp) => {
  let caught: unknown
  try {
    f()
  } catch (e) {
    caught = e
  }
  expect(caught).toBeInstanceOf(ConfinementError)
  expect((caught as ConfinementError).reason).toBe("invalid-policy")
  expect((caught as Error).message).toMatch(pattern)
}

describe("protected-path policy", () => {
  it("defaults: every .git read-only, ~/.ssh and ~/.gnupg inaccessible", () => {
    const p = compilePolicy()
    expect(p.mode).toBe("confined")
    expect(p.rules.map((r) => [r.glob, r.access, r.base, r.source])).toEqual([
      ["**/.git", "read-only", "workspace", "default"],
      ["~/.ssh", "inaccessible", "home", "default"],
      ["~/.gnupg", "inaccessible", "home", "default"]
    ])
    expect(Object.isFrozen(p.rules)).toBe(true)
    expect(Object.isFrozen(defaultRules)).toBe(true)
  })

  it("user rules come first, in order, inaccessible unless marked read-only; pairs work as alist entries", () => {
    const p = compilePolicy({ protected: [[".env*"], ["docs/**", "read-only"], { glob: "/etc/app/*.key" }] })
    expect(p.rules.slice(0, 3).map((r) => [r.glob, r.access, r.base, r.relative])).toEqual([
      [".env*", "inaccessible", "workspace", ".env*"],
      ["docs/**", "read-only", "workspace", "docs/**"],
      ["/etc/app/*.key", "inaccessible", "absolute", "etc/app/*.key"]
    ])
    expect(p.rules).toHaveLength(6)
    expect(compilePolicy({ defaults: false, protected: [["x"]] }).rules).toHaveLength(1)
  })

  it("full access drops the defaults and every rule not marked hard", () => {
    const p = compilePolicy({ protected: [{ glob: "~/.aws", hard: true }, { glob: "secrets" }] }, "full-access")
    expect(p.mode).toBe("full-access")
    expect(p.rules.map((r) => r.glob)).toEqual(["~/.aws"])
    expect(compilePolicy({}, "full-access").rules).toEqual([])
  })

  it("equal policies have equal fingerprints; any difference shows", () => {
    expect(compilePolicy({ protected: [["a"]] }).fingerprint).toBe(compilePolicy({ protected: [{ glob: "a" }] }).fingerprint)
    expect(compilePolicy({ protected: [["a"]] }).fingerprint).not.toBe(compilePolicy({ protected: [["a", "read-only"]] }).fingerprint)
    expect(compilePolicy().fingerprint).not.toBe(compilePolicy({}, "full-access").fingerprint)
  })

  it("refuses what it cannot apply faithfully, saying why", () => {
    invalid(() => compilePolicy({ protected: [[""]] }), /non-empty/)
    invalid(() => compilePolicy({ protected: [["a\0b"]] }), /NUL/)
    invalid(() => compilePolicy({ protected: [["a\\*b"]] }), /escapes/)
    invalid(() => compilePolicy({ protected: [["!secret"]] }), /negated/)
    invalid(() => compilePolicy({ protected: [["+(a|b)"]] }), /extglob/)
    invalid(() => compilePolicy({ protected: [["~bob/.ssh"]] }), /~user/)
    invalid(() => compilePolicy({ protected: [["a/../b"]] }), /'\.\.'/)
    invalid(() => compilePolicy({ protected: [["./a"]] }), /'\.'/)
    invalid(() => compilePolicy({ protected: [["a//b"]] }), /empty path segments/)
    invalid(() => compilePolicy({ protected: [["keys/"]] }), /empty path segments/)
    invalid(() => compilePolicy({ protected: [["~"]] }), /whole root/)
    invalid(() => compilePolicy({ protected: [["/"]] }), /whole root/)
    invalid(() => compilePolicy({ protected: [["a", "hidden" as never]] }), /access must be/)
    invalid(() => compilePolicy({ protected: [{ glob: "a", hard: "yes" as never }] }), /hard must be a boolean/)
    invalid(() => compilePolicy({ protected: [{ glob: "a", missing: "make" as never }] }), /missing must be/)
    invalid(() => compilePolicy({ protected: "a" as never }), /array/)
    invalid(() => compilePolicy(null as never), /object/)
    invalid(() => compilePolicy({}, "open" as never), /mode must be/)
  })

  it("names the one path a rule protects when it is determinable", () => {
    expect(determinablePath("**/.git")).toBe(".git")
    expect(determinablePath("a/**/b")).toBe("a/b")
    expect(determinablePath(".ssh")).toBe(".ssh")
    expect(determinablePath("*.pem")).toBeNull()
    expect(determinablePath("**")).toBeNull()
    expect(determinablePath("{a,b}/c")).toBeNull()
    expect(isLiteral(".git/hooks")).toBe(true)
    expect(isLiteral("**/.git")).toBe(false)
  })
})
