/**
 * The configuration file: named steps in pinnedfs.config.json, pinnedfs.config.js or package.json's
 * "pinnedfs" key, validated with errors that name the file, the key and the value; `pinnedfs fix`
 * running every step in order or those `--step` names, a failing step stopping (and undoing) the
 * run. Reading it through the pinned root under both resolve strategies.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { ConfigurationError, loadConfiguration, parseConfiguration } from "../../src/dev/index.ts"
import { PinnedRoot } from "../../src/index.ts"
import { strategies } from "../support/strategies.ts"
import { scratch } from "../support/tree.ts"
import { useCli } from "./support/cli.ts"
import { disk } from "./support/workspace.ts"

const pinnedfs = useCli("config")

const step = (more: Record<string, unknown> = {}) => ({ name: "lint", scope: ["src/**"], command: ["eslint", "--fix"], ...more })

describe("parseConfiguration", () => {
  it("answers the steps, with defaults filled in", () => {
    const c = parseConfiguration(
      { steps: [step(), step({ name: "fmt", mayCreate: ["NEWS.md"], confine: true, timeout: 5000, deny: ["src/gen/**"] })] },
      "x.json"
    )
    expect(c).toEqual({
      source: "x.json",
      steps: [
        { name: "lint", scope: ["src/**"], command: ["eslint", "--fix"], mayCreate: [], deny: [], confine: false, timeout: undefined },
        {
          name: "fmt",
          scope: ["src/**"],
          command: ["eslint", "--fix"],
          mayCreate: ["NEWS.md"],
          deny: ["src/gen/**"],
          confine: true,
          timeout: 5000
        }
      ]
    })
  })

  it("refuses every malformed value, naming the file, the key and the value", () => {
    const cases: Array<[unknown, RegExp]> = [
      [[], /^x\.json: \(top level\): expected an object with a "steps" array, got \[\]$/],
      [{ step: [] }, /^x\.json: step: unknown key \(the only one is "steps"\), got \[\]$/],
      [{ steps: [] }, /^x\.json: steps: expected a non-empty array of steps, got \[\]$/],
      [{ steps: ["lint"] }, /^x\.json: steps\[0\]: expected an object, got "lint"$/],
      [
        { steps: [step({ maycreate: ["a"] })] },
        /^x\.json: steps\[0\]\.maycreate: unknown key \(expected one of name, scope, command, mayCreate, deny, confine, timeout\), got \["a"\]$/
      ],
      [{ steps: [step({ name: "" })] }, /steps\[0\]\.name: expected a non-empty name without control characters, got ""$/],
      [
        { steps: [step({ name: "a\u001b[2Jb" })] },
        /steps\[0\]\.name: expected a non-empty name without control characters, got "a\\u001b\[2Jb"$/
      ],
      [{ steps: [step(), step()] }, /steps\[1\]\.name: a step of that name comes earlier: names must be unique, got "lint"$/],
      [{ steps: [step({ scope: [] })] }, /steps\[0\]\.scope: expected a non-empty array of globs, got \[\]$/],
      [{ steps: [step({ scope: "src/**" })] }, /steps\[0\]\.scope: expected a non-empty array of globs, got "src\/\*\*"$/],
      [
        { steps: [step({ scope: ["/etc/**"] })] },
        /steps\[0\]\.scope: glob '\/etc\/\*\*' is absolute: globs are workspace-relative, got \["\/etc\/\*\*"\]$/
      ],
      [{ steps: [step({ deny: ["!x"] })] }, /steps\[0\]\.deny: glob '!x' is negated/],
      [
        { steps: [step({ command: "eslint --fix" })] },
        /steps\[0\]\.command: expected the program and its arguments as a non-empty array of strings \(no shell parses it\), got "eslint --fix"$/
      ],
      [{ steps: [step({ command: [] })] }, /steps\[0\]\.command: .*, got \[\]$/],
      [{ steps: [step({ confine: "yes" })] }, /steps\[0\]\.confine: expected true or false, got "yes"$/],
      [
        { steps: [step({ confine: true, mayCreate: ["gen/*.ts"] })] },
        /steps\[0\]\.mayCreate: a confined step's mayCreate names files, not globs, got "gen\/\*\.ts"$/
      ],
      [{ steps: [step({ timeout: "60s" })] }, /steps\[0\]\.timeout: expected a positive whole number of milliseconds, got "60s"$/],
      [{ steps: [step({ timeout: 1.5 })] }, /steps\[0\]\.timeout: .*, got 1\.5$/],
      [{ steps: [step({ timeout: 0 })] }, /steps\[0\]\.timeout: .*, got 0$/]
    ]
    for (const [value, message] of cases) {
      let error: unknown
      try {
        parseConfiguration(value, "x.json")
      } catch (e) {
        error = e
      }
      expect([JSON.stringify(value), error instanceof ConfigurationError]).toEqual([JSON.stringify(value), true])
      expect((error as Error).message).toMatch(message)
    }
  })
})

describe.each(strategies)("loadConfiguration (%s)", (strategy) => {
  const at = async (files: Record<string, string>) => {
    const s = scratch()
    s.make(files)
    return { s, root: await PinnedRoot.open(s.root, { strategy }) }
  }
  const steps = JSON.stringify({ steps: [step()] })

  it("reads pinnedfs.config.json, pinnedfs.config.js and package.json's pinnedfs key", async () => {
    for (const [file, text, source] of [
      ["pinnedfs.config.json", steps, "pinnedfs.config.json"],
      ["pinnedfs.config.js", `export default ${steps}\n`, "pinnedfs.config.js"],
      ["package.json", JSON.stringify({ name: "x", type: "module", pinnedfs: { steps: [step()] } }), "package.json#pinnedfs"]
    ] as const) {
      const { root } = await at({ [file]: text, ...(file === "pinnedfs.config.js" ? { "package.json": '{"type":"module"}' } : {}) })
      const c = await loadConfiguration(root)
      expect([file, c?.source, c?.steps.map((x) => x.name)]).toEqual([file, source, ["lint"]])
      root.close()
    }
  })

  it("has none when there is none (a package.json without the key included)", async () => {
    const { root } = await at({ "package.json": '{"name":"x"}' })
    expect(await loadConfiguration(root)).toBeUndefined()
    root.close()
  })

  it("refuses two configurations at once, invalid JSON, and a configuration that is a link", async () => {
    const two = await at({ "pinnedfs.config.json": steps, "package.json": JSON.stringify({ pinnedfs: { steps: [step()] } }) })
    await expect(loadConfiguration(two.root)).rejects.toThrow(
      /pinnedfs.config.json and package.json#pinnedfs both configure pinnedfs: keep one/
    )
    const bad = await at({ "pinnedfs.config.json": "{ steps: " })
    await expect(loadConfiguration(bad.root)).rejects.toThrow(/^pinnedfs.config.json: not valid JSON/)
    const linked = await at({})
    fs.writeFileSync(path.join(linked.s.outside, "elsewhere.json"), steps)
    fs.symlinkSync(path.join(linked.s.outside, "elsewhere.json"), linked.s.abs("pinnedfs.config.json"))
    await expect(loadConfiguration(linked.root)).rejects.toThrow(/link/)
    for (const r of [two.root, bad.root, linked.root]) r.close()
  })
})

describe("pinnedfs fix with configured steps", () => {
  /** A workspace with a local tool in node_modules/.bin, as npm installs one. */
  const workspace = (config: unknown) => {
    const s = scratch()
    s.make({ "src/a.ts": "a\n", "docs/b.md": "b\n", "pinnedfs.config.json": JSON.stringify(config) })
    const bin = s.abs("node_modules/.bin/stamp")
    fs.mkdirSync(path.dirname(bin), { recursive: true })
    fs.writeFileSync(bin, '#!/bin/sh\nword="$1"; shift\nfor f; do echo "$word" >> "$f"; done\n[ "$word" != fail ]\n')
    fs.chmodSync(bin, 0o755)
    return s
  }
  const config = {
    steps: [
      { name: "one", scope: ["src/**"], command: ["stamp", "one"] },
      { name: "two", scope: ["src/**", "docs/**"], command: ["stamp", "two"] }
    ]
  }

  it("runs every step in order, each seeing the one before, with the workspace's own tools on PATH", async () => {
    const s = workspace(config)
    const r = await pinnedfs(["fix", "-q", "-w", s.root])
    expect(r.code).toBe(0)
    expect(disk(s, "src/a.ts")).toBe("a\none\ntwo\n")
    expect(disk(s, "docs/b.md")).toBe("b\ntwo\n")
    expect(r.stdout).toMatch(
      /^step one:\n {2}changed: +src\/a\.ts\n {2}one: ok\nstep two:\n {2}changed: +docs\/b\.md, src\/a\.ts\n {2}two: ok$/m
    )
  })

  it("--step runs the steps named; an unknown one is a usage error naming the steps there are", async () => {
    const s = workspace(config)
    const r = await pinnedfs(["fix", "-q", "-w", s.root, "--step", "two"])
    expect([r.code, disk(s, "src/a.ts")]).toEqual([0, "a\ntwo\n"])
    const unknown = await pinnedfs(["fix", "-q", "-w", s.root, "--step", "three"])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/--step 'three': pinnedfs.config.json has no such step \(it has one, two\)/)
  })

  it("a failing step is undone and the steps after it are skipped; --json lists every step", async () => {
    const s = workspace({ steps: [config.steps[0], { name: "bad", scope: ["docs/**"], command: ["stamp", "fail"] }, config.steps[1]] })
    const r = await pinnedfs(["fix", "-q", "--json", "-w", s.root])
    expect(r.code).toBe(1)
    const report = JSON.parse(r.stdout) as { steps: Array<{ name: string; status: string; restored: Array<string> }> }
    expect(report.steps.map((x) => [x.name, x.status, x.restored])).toEqual([
      ["one", "ok", []],
      ["bad", "failed", ["docs/b.md"]],
      ["two", "skipped", []]
    ])
    expect([disk(s, "src/a.ts"), disk(s, "docs/b.md")]).toEqual(["a\none\n", "b\n"])
  })

  it("a configuration error is a usage error that names the key and the value", async () => {
    const s = workspace({ steps: [{ ...config.steps[0], timeout: "1m" }] })
    const r = await pinnedfs(["fix", "-w", s.root])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(
      /pinnedfs fix: pinnedfs.config.json: steps\[0\]\.timeout: expected a positive whole number of milliseconds, got "1m"/
    )
    expect(disk(s, "src/a.ts")).toBe("a\n")
  })
})
