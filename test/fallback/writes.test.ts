// What only the fallback is asserted to do (everything else it shares with the native executor is in
// the shared conformance suite, test/effect/conformance.ts, which runs over it too).
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { expectReason, harness, spellings } from "./support.ts"

describe.each(spellings)("fallback writes (%s root)", (spelling) => {
  // Not yet a shared case: the native extension accepted a 9-byte writeFileString under an 8-byte
  // limit when this suite was folded into the shared one.
  it("refuses a writeFileString payload over the content limit, writing nothing", async () => {
    const h = await harness(spelling, {}, { contentLimit: 4 })
    expectReason(await h.fail({ operation: "writeFileString", path: h.at("x"), data: "12345" }), "BadArgument", /limit/)
    expect(fs.existsSync(h.s.abs("x"))).toBe(false)
  })
})
