/**
 * Every subcommand's help as a user reads it: a repeatable option says once what happens when it is
 * not given. Commander prints an option's default value after its description, so a `[]` default
 * read "(repeatable; default: none) (default: [])".
 */
import { describe, expect, it } from "vitest"
import { useCli } from "../dev/support/cli.ts"

const pinnedfs = useCli("cli-help")

describe("pinnedfs --help", () => {
  it.each(["run", "fix", "mcp"])("pinnedfs %s --help states each default once, and never as a JavaScript value", async (command) => {
    const ran = await pinnedfs([command, "--help"])
    expect(ran.code).toBe(0)
    // Option descriptions wrap, so join the lines before looking for a doubled default.
    const help = ran.stdout.replace(/\s+/g, " ")
    expect(help).not.toMatch(/\(default: \[\]\)/)
    expect(help).not.toMatch(/\(default: [^)]*\) \(default: [^)]*\)/)
    expect(help).not.toMatch(/\(default: (undefined|null|false)\)/)
  })
})
