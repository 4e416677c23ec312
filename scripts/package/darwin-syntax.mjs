#!/usr/bin/env node
// npm run check:darwin — compiles the macOS build's sources on Linux, syntax and types only.
//
// There is no Mac in CI, and the macOS files would otherwise first meet a compiler on a user's
// machine. This runs clang++ -fsyntax-only, with the strictest flags the build uses plus -Werror,
// over exactly what binding.gyp compiles on macOS (native/sources.json: addon, core, darwin and the
// sandbox launcher), as the macOS compiler sees it: __APPLE__ and __MACH__ defined, __linux__ not, and
// native/ci/darwin-shim in front of the system headers for the few macOS-only declarations
// (README.md there says what it can and cannot catch).
import { spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { availableParallelism } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const require = createRequire(join(root, "package.json"))
const shim = join(root, "native", "ci", "darwin-shim")
const sources = JSON.parse(readFileSync(join(root, "native", "sources.json"), "utf8"))

// Left out, each with why: nothing in it differs on macOS, and the Linux build compiles it.
export const notChecked = new Map([
  [
    "native/binding/settle_pacer.cc",
    "portable libuv only (uv_async, uv_prepare, uv_hrtime); libuv's macOS header needs the Mach SDK's headers, which the shim does not stand in for"
  ]
])

// The core's directories listed as binding.gyp lists them (native/sources.json: coreDirs).
const coreDirSources = () =>
  sources.coreDirs.flatMap((d) =>
    readdirSync(join(root, d))
      .filter((f) => f.endsWith(".cc"))
      .sort()
      .map((f) => `${d}/${f}`)
  )

export const darwinSources = () =>
  [...sources.addon, ...sources.core, ...coreDirSources(), ...sources.darwin, ...sources.launcher].filter((f) => !notChecked.has(f))

export const clangArgs = (file) => [
  "-fsyntax-only",
  "-std=c++17",
  "-Wall",
  "-Wextra",
  "-Werror",
  "-fexceptions",
  "-U__linux__",
  "-U__linux",
  "-Ulinux",
  "-U__gnu_linux__",
  "-D__APPLE__=1",
  "-D__MACH__=1",
  // binding.gyp's defines, so the addon is checked as it is built.
  "-DNAPI_VERSION=8",
  "-DNAPI_DISABLE_CPP_EXCEPTIONS",
  "-DNODE_ADDON_API_DISABLE_DEPRECATED",
  "-DNODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS",
  "-isystem",
  shim,
  "-include",
  join(shim, "linux_only.h"),
  "-isystem",
  require("node-api-headers").include_dir,
  "-I",
  require("node-addon-api").include_dir,
  "-I",
  join(root, "native"),
  resolve(root, file)
]

/** Compiles one file as the macOS build would, syntax only: `{ ok, output }`. */
export const checkDarwin = (compiler, file) =>
  new Promise((done) => {
    const child = spawn(compiler, clangArgs(file), { stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (d) => (output += d))
    child.stderr.on("data", (d) => (output += d))
    child.on("error", (e) => done({ file, ok: false, output: `${compiler}: ${e.message}` }))
    child.on("close", (code) => done({ file, ok: code === 0, output }))
  })

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const compiler = process.env.CLANGXX ?? "clang++"
  const files = darwinSources()
  const results = []
  let next = 0
  const worker = async () => {
    while (next < files.length) results.push(await checkDarwin(compiler, files[next++]))
  }
  await Promise.all(Array.from({ length: Math.min(2, availableParallelism()) }, worker))
  const failed = results.filter((r) => !r.ok)
  for (const r of failed) process.stderr.write(`== ${r.file}\n${r.output}\n`)
  console.log(`macOS syntax check (${compiler}): ${results.length - failed.length} of ${files.length} sources compile`)
  for (const [file, why] of notChecked) console.log(`  not checked: ${file} (${why})`)
  process.exit(failed.length > 0 ? 1 : 0)
}
