/**
 * Where writeFile's base64 is handled in the native extension: the JavaScript thread checks only
 * what the length tells (a multiple of 4, the size against the content limit) and the worker
 * decodes. An oversized payload never reaches the addon; an invalid one costs one trip, is refused
 * there before anything is opened, and leaves the file as it was. The shared conformance suite
 * (conformance.ts) holds the generated comparison with Node's decoding.
 */
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { NodeAtomicFileSystem } from "../../src/effect/index.ts"
import { noTestHooks, testHooks, trips } from "../support/hooks.ts"
import { skipUnless } from "../support/skip.ts"
import { strategies } from "../support/strategies.ts"
import { host, ok, refused, workspace } from "./support.ts"

describe.each(strategies)("writeFile base64 on the worker (%s)", (strategy) => {
  const setup = (contentLimit?: number) => {
    const w = workspace({ "top.txt": "top" })
    const extension = NodeAtomicFileSystem.make({ strategy, ...(contentLimit === undefined ? {} : { contentLimit }) })
    return { w, h: host(extension), close: () => extension.close() }
  }

  it("refuses an oversized payload without a trip to the addon, an invalid one on the worker", async (ctx) => {
    skipUnless(ctx, testHooks, noTestHooks)
    const { w, h, close } = setup(1024)
    try {
      await ok(h, w.req("exists", { path: w.l("top.txt") })) // the root pinned first
      let start = trips()
      const over = await refused(h, w.req("writeFile", { path: w.l("top.txt"), data: "\u0141".repeat(4 << 20) }), "BadArgument")
      expect(over.reason.description).toMatch(/exceeds the 1024 byte content limit/)
      expect(trips() - start).toBe(0)
      start = trips()
      const bad = await refused(h, w.req("writeFile", { path: w.l("top.txt"), data: "Zm9v\u0141AAA" }), "BadArgument")
      expect(bad.reason.description).toBe("data is not valid base64")
      expect(bad.reason.method).toBe("writeFile")
      expect(trips() - start).toBe(1)
      expect(fs.readFileSync(w.s.abs("top.txt"), "utf8")).toBe("top")
    } finally {
      close()
    }
  })

  it("writes a payload of many groups exactly as Node decodes it", async () => {
    const { w, h, close } = setup(8 << 20)
    try {
      // Over 8 MiB of text: the addon's copy asks for huge pages first (args.cc, kHugeCopy).
      const bytes = Buffer.alloc((7 << 20) + 2)
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) >>> 3
      const data = bytes.toString("base64")
      await ok(h, w.req("writeFile", { path: w.l("big.bin"), data }))
      expect(fs.readFileSync(w.s.abs("big.bin")).equals(bytes)).toBe(true)
      // Appended in 512 KiB pieces (ops/write.cc), every byte in order.
      await ok(h, w.req("writeFile", { path: w.l("big.bin"), data, options: { flag: "a" } }))
      expect(fs.readFileSync(w.s.abs("big.bin")).equals(Buffer.concat([bytes, bytes]))).toBe(true)
      await ok(h, w.req("writeFile", { path: w.l("big.bin"), data }))
      // One symbol wrong at the very end: refused, and the file written before is as it was.
      const bad = `${data.slice(0, -2)}!=`
      await refused(h, w.req("writeFile", { path: w.l("big.bin"), data: bad }), "BadArgument")
      expect(fs.readFileSync(w.s.abs("big.bin")).equals(bytes)).toBe(true)
    } finally {
      close()
    }
  })
})
