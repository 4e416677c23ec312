/**
 * The check behind pinnedfs/effect, /kernel and /fallback (src/entry/peers.ts): it names exactly
 * the peers that do not resolve, with the version range package.json asks for, and loads nothing
 * then. test/package/consumer.test.ts sees the same errors from a real install without the peers.
 */
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { describe, expect, it } from "vitest"
import { loadWithPeers } from "../../src/entry/peers.ts"

// Where the compiled entry points live: ../../package.json from here is the package's manifest.
const from = pathToFileURL(path.resolve(import.meta.dirname, "..", "..", "dist", "entry", "effect.js")).href

const attempt = (installed: ReadonlyArray<string>, implementation = "./never-loaded.js") => {
  const loaded: Array<string> = []
  try {
    loadWithPeers({
      entry: "pinnedfs/effect",
      peers: ["effect", "@effect/platform-node"],
      from,
      resolve: (specifier) => {
        if (!installed.includes(specifier))
          throw Object.assign(new Error(`Cannot find package '${specifier}'`), { code: "ERR_MODULE_NOT_FOUND" })
        return `file:///node_modules/${specifier}/index.js`
      },
      implementation
    })
    loaded.push(implementation)
    return { message: "", cause: undefined, loaded }
  } catch (e) {
    return { message: (e as Error).message, cause: (e as Error).cause as Error | undefined, loaded }
  }
}

describe("the optional-peer check", () => {
  it("names both missing peers and the command that installs them", () => {
    const r = attempt([])
    expect(r.message).toBe(
      "pinnedfs/effect needs effect and @effect/platform-node, optional peer dependencies of pinnedfs that are not installed. " +
        'Install them beside pinnedfs: npm install effect@"^4.1.0" @effect/platform-node@"^4.1.0"'
    )
    expect(r.cause?.message).toBe("Cannot find package 'effect'")
  })

  it("names only the peer that is missing", () => {
    expect(attempt(["effect"]).message).toBe(
      "pinnedfs/effect needs @effect/platform-node, an optional peer dependency of pinnedfs that is not installed. " +
        'Install it beside pinnedfs: npm install @effect/platform-node@"^4.1.0"'
    )
  })

  it("loads the implementation once every peer resolves", () => {
    // node:path stands in for the implementation: require() of it proves the load was reached.
    const r = attempt(["effect", "@effect/platform-node"], "node:path")
    expect(r.message).toBe("")
    expect(r.loaded).toEqual(["node:path"])
  })
})
