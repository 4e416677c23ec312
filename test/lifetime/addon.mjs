// The raw addon for child processes and worker threads, which run plain JavaScript (no TypeScript
// loader there): the same node-gyp-build lookup src/internal/native.ts makes.
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

export const packageRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

export const loadAddon = () => createRequire(import.meta.url)("node-gyp-build")(packageRoot)
