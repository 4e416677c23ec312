/**
 * Façade calls an in-process engine does not await: every call started during the capability is
 * finished or refused before the re-read, and a call (or the next stage of one) that would act
 * after the capability returned is refused, reported as an ERROR, and changes nothing on disk.
 * Under both resolve strategies.
 */
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { acquire, approveAll, type Capability, Plan, Step } from "../../src/dev/index.ts"
import { strategies } from "../support/strategies.ts"
import { disk, expectDiskEqualsWorkspace, openPolicy, setup } from "./support/workspace.ts"

describe.each(strategies)("calls left running when a capability returns (%s)", (strategy) => {
  const start = async () => {
    const { s, root } = await setup(strategy, { "src/a.ts": "a\n", "src/b.ts": "b\n" })
    const ws = await acquire(root, { scope: ["src/**"] })
    const run = (c: Capability) => Plan.run([Step.fix("f", c)], { root, workspace: ws, policy: openPolicy, gate: approveAll })
    return { s, ws, run }
  }
  const engine = (body: Capability["run"], mayCreate: ReadonlyArray<string> = []): Capability => ({
    name: "careless",
    scope: ["src/**"],
    mayCreate,
    run: body
  })

  it("a write started without await lands before the re-read, which takes it in; a WARNING says so", async () => {
    const { s, ws, run } = await start()
    const result = await run(
      engine(async (access) => {
        void access.write("src/a.ts", "formatted\n")
      })
    )
    expect(result.steps[0]!.status).toBe("ok")
    expect(result.steps[0]!.diagnostics.map((d) => [d.severity, d.code])).toEqual([["WARNING", "not-awaited"]])
    expect(result.steps[0]!.capabilities[0]!.reread!.changed).toEqual(["src/a.ts"])
    expect([disk(s, "src/a.ts"), ws.get("src/a.ts")]).toEqual(["formatted\n", "formatted\n"])
    expectDiskEqualsWorkspace(s, ws)
  })

  it("a write chained after an unawaited read comes after the return: refused, an ERROR, nothing on disk", async () => {
    const { s, ws, run } = await start()
    let refused: unknown
    const result = await run(
      engine(async (access) => {
        void access
          .read("src/a.ts")
          .then((text) => access.write("src/a.ts", `${text}more\n`))
          .catch((e: unknown) => (refused = e))
      })
    )
    const step = result.steps[0]!
    expect(step.status).toBe("failed")
    expect(step.diagnostics.filter((d) => d.severity === "ERROR").map((d) => [d.code, d.path])).toEqual([["refused", "src/a.ts"]])
    expect(step.diagnostics.find((d) => d.code === "refused")!.message).toMatch(/came after the capability returned: refused, nothing done/)
    expect((refused as Error).message).toMatch(/came after the capability returned/)
    expect([disk(s, "src/a.ts"), ws.get("src/a.ts")]).toEqual(["a\n", "a\n"])
  })

  it("a write whose parents are still to be made is refused at that stage: no directory is created", async () => {
    const { s, ws, run } = await start()
    let refused: unknown
    const result = await run(
      engine(
        async (access) => {
          access.write("src/gen/deep/x.ts", "x\n").catch((e: unknown) => (refused = e))
        },
        ["src/gen/**"]
      )
    )
    expect(result.steps[0]!.status).toBe("failed")
    expect((refused as Error).message).toMatch(/came after the capability returned/)
    expect(fs.existsSync(s.abs("src/gen"))).toBe(false)
    expect(ws.paths()).toEqual(["src/a.ts", "src/b.ts"])
  })

  it("a call made after the step ended is refused, changes nothing, and is an ERROR in the workspace's diagnostics", async () => {
    const { s, ws, run } = await start()
    let kept: Parameters<Capability["run"]>[0] | undefined
    const result = await run(
      engine(async (access) => {
        kept = access
      })
    )
    expect(result.steps[0]!.status).toBe("ok")
    const late = await kept!.write("src/b.ts", "late\n").then(
      () => "written",
      (e: Error) => e.message
    )
    expect(late).toMatch(/came after the capability returned/)
    expect(disk(s, "src/b.ts")).toBe("b\n")
    expect(ws.diagnostics.map((d) => [d.severity, d.code, d.path])).toEqual([["ERROR", "refused", "src/b.ts"]])
    expect(ws.diagnostics[0]!.message).toMatch(/after its step ended, refused/)
  })
})
