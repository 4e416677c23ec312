#!/usr/bin/env node
// prepublishOnly: npm publish stops here unless every prebuild the README promises is in
// prebuilds/ and passes the glibc 2.28 check. (npm pack alone does not run this: CI packs the
// tarball for its tests whether or not prebuilds were made.)
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { reportPromised } from "./prebuilds.mjs"

const root = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), "..", "..")
if (!reportPromised(root)) {
  console.error(
    "\nRefusing to publish: the package promises prebuilds for linux-x64 and linux-arm64 (glibc 2.28+).\n" +
      "Make them with `npm run build:prebuilds` (Debian/Ubuntu x86-64 with g++-aarch64-linux-gnu), then publish again."
  )
  process.exit(1)
}
