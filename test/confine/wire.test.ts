/**
 * The native confinement programs from JavaScript: malformed requests are BadArgument, never a
 * crash; descriptors handed out are the caller's and are all released; a whole prepared launch
 * leaves no descriptor behind, launched or refused.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Confinement, ConfinementError } from "../../src/confine/index.ts"
import { closeHeld, hold } from "../../src/confine/wire.ts"
import { PinnedFsError } from "../../src/internal/errors.ts"
import { PinnedRoot } from "../../src/PinnedRoot.ts"
import { strategies } from "../support/strategies.ts"
import { openDescriptorCount } from "../support/tree.ts"
import { runScript, sandboxTree } from "./support/tree.ts"

const rejection = async (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as { code?: string; refusal?: string }
  )

describe.each(strategies)("confine programs from JavaScript (%s)", (strategy) => {
  it("refuses malformed requests with a BadArgument, whatever the bytes", async () => {
    const t = sandboxTree()
    const root = await PinnedRoot.open(t.ws, { strategy })
    for (const bad of [new Uint8Array(), new Uint8Array([9]), new Uint8Array([1, 1, 0]), new Uint8Array([2, 255, 255, 255, 255])]) {
      const e = await rejection(root.handle.confine(bad)[0])
      expect(e?.refusal).toBe("badargument")
    }
    for (const notBytes of ["\x02", [2, 0, 0, 0, 0], null, undefined, new Uint16Array(3)]) {
      const e = await rejection((root.handle.confine as (u: unknown) => [Promise<Buffer>, () => void])(notBytes)[0])
      expect(e?.refusal).toBe("badargument")
    }
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 64 }), async (bytes) => {
        const [answer, cancel] = root.handle.confine(bytes)
        cancel()
        const outcome = await answer.then(
          (b) => ({ ok: true as const, b }),
          (e: { refusal?: string; code?: string }) => ({ ok: false as const, e })
        )
        // A well-formed request may succeed (its descriptors are then ours to close).
        if (outcome.ok) return
        expect(["badargument", "symlink", ""]).toContain(outcome.e.refusal)
      }),
      { numRuns: 300 }
    )
    root.close()
    const closed = await rejection(root.handle.confine(new Uint8Array([2, 0, 0, 0, 0]))[0])
    expect(closed?.code).toBe("EBADF")
  })

  it("hands out one descriptor per held path; closing them releases every one", async () => {
    const t = sandboxTree()
    const root = await PinnedRoot.open(t.ws, { strategy })
    const before = openDescriptorCount()
    const answer = await hold(root, ["", ".git", ".git/config", "missing", "src.txt"])
    expect(answer.members.map((m) => m.status)).toEqual(["held", "held", "held", "missing", "held"])
    expect(answer.members.filter((m) => m.fd >= 0)).toHaveLength(4)
    expect(openDescriptorCount()).toBe(before + 4)
    for (const m of answer.members) if (m.fd >= 0) closeHeld(m.fd)
    expect(openDescriptorCount()).toBe(before)
    const e = await hold(root, ["a\0b"]).catch((e: unknown) => e)
    expect(e).toBeInstanceOf(PinnedFsError)
    root.close()
  })

  it("a launch leaves no descriptor open: prepared and run, prepared and abandoned, or refused", async () => {
    const t = sandboxTree()
    fs.rmSync(path.join(t.ws, ".git"), { recursive: true })
    const s = new Confinement({ target: { workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") }, strategy })
    await (await s.prepare()).cleanup() // warm up: lazily opened descriptors (thread pool, /dev/null) stay out of the count
    const before = openDescriptorCount()
    const run = await runScript(await s.prepare(), "true")
    expect(run.started).toBe(true)
    await (await s.prepare()).cleanup()
    fs.mkdirSync(path.join(t.ws, "lib"))
    fs.symlinkSync(t.outside, path.join(t.ws, "lib", ".git"))
    const refused = await s.prepare().catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(ConfinementError)
    expect(openDescriptorCount()).toBe(before)
  })
})
