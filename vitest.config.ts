import { defineConfig } from "vitest/config"
import { belowFloor, floor } from "./scripts/node-lines.mjs"

if (belowFloor()) {
  throw new Error(
    `vitest 5 and the Effect peers need Node ${floor} or later; this is Node ${process.version}. ` +
      "`npm test` (or `npm test -- test/some.test.ts`) runs the suite on a supported Node, fetched once from the npm registry."
  )
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Native work runs on libuv's pool; a few files at a time keeps the two cores honest.
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
