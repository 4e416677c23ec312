#!/usr/bin/env node
// npm run prebuild:binaries [-- <platform>-<arch>]   (default: this machine, e.g. linux-x64)
//
// Builds one N-API binary with prebuildify (--napi: one binary serves every Node version with
// N-API 8; --strip: no debug symbols) into prebuilds/<platform>-<arch>/, where node-gyp-build finds
// it at install time without compiling. Binaries are never committed: see prebuilds/README.md.
import { spawnSync } from "node:child_process"

const target = process.argv[2] ?? `${process.platform}-${process.arch}`
const [platform, arch] = target.split("-")
if (!platform || !arch) {
  console.error(`target must look like linux-x64, got '${target}'`)
  process.exit(2)
}
if (platform !== process.platform) {
  console.error(`prebuildify compiles for this machine's platform (${process.platform}); build ${target} on a ${platform} machine`)
  process.exit(2)
}
// --tag-libc marks a glibc build as such, so it never loads on musl (node-gyp-build reads the tag).
const args = ["prebuildify", "--napi", "--strip", "--tag-libc", "--arch", arch, "--platform", platform]
const r = spawnSync("npx", args, { stdio: "inherit" })
process.exit(r.status ?? 1)
