import { defineConfig } from "vitest/config"
import "./test/support/node20.ts"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Native work runs on libuv's pool; a few files at a time keeps the two cores honest.
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
