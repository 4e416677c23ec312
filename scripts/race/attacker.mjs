// Builds and drives the native attacker (test/race/attacker.c).
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const repo = path.resolve(fileURLToPath(new URL("../..", import.meta.url)))

/**
 * Compiles a C helper of the tests once (cached in build-test-bin/, since node-gyp rebuild wipes
 * build/) and returns its path; rebuilt when the source, or a header it includes from its own
 * directory, is newer. `shared`: a Node addon (plain N-API, headers from node-api-headers) instead
 * of a program. Needs a C compiler as `cc`.
 */
export const buildHelper = (source, name, { shared = false } = {}) => {
  const src = path.join(repo, source)
  const bin = path.join(repo, "build-test-bin", name)
  const headers = [...fs.readFileSync(src, "utf8").matchAll(/^#include "([^"]+)"/gm)].map((m) => path.join(path.dirname(src), m[1]))
  const newest = Math.max(...[src, ...headers].map((f) => fs.statSync(f).mtimeMs))
  const fresh = fs.existsSync(bin) && fs.statSync(bin).mtimeMs >= newest
  if (!fresh) {
    fs.mkdirSync(path.dirname(bin), { recursive: true })
    // Built to a temporary name and renamed, so parallel test files never run a half-written binary.
    const tmp = `${bin}.${process.pid}`
    const kind = shared ? ["-shared", "-fPIC", "-I", path.join(repo, "node_modules/node-api-headers/include")] : []
    execFileSync("cc", ["-O2", "-Wall", "-Wextra", "-Werror", ...kind, "-o", tmp, src], { stdio: "inherit" })
    fs.renameSync(tmp, bin)
  }
  return bin
}

/** The race attacker (test/race/attacker.c), built once. */
export const buildAttacker = () => buildHelper("test/race/attacker.c", "attacker")

/**
 * @typedef {{ started: Promise<unknown>, park: () => Promise<{ swaps: number, failures: number, home: boolean }>,
 *   resume: () => void, exchange: () => Promise<boolean>,
 *   stop: () => Promise<{ swaps: number, failures: number }> }} Attacker
 * swaps: exchanges of the running attack the kernel did (not the ones park or exchange make);
 * failures: exchanges of the running attack the kernel refused. exchange (parked only): every pair
 * exchanged once, the attacker still parked; true when each exchange was done.
 */

/**
 * Starts swapping `pairs` ([[a, b], ...]) with RENAME_EXCHANGE until stopped.
 * @returns {Attacker}
 */
export const startAttacker = (bin, pairs) => {
  const child = spawn(bin, pairs.flat(), { stdio: ["pipe", "pipe", "inherit"] })
  let buffered = ""
  /** @type {Array<(line: string) => void>} */
  const waiting = []
  child.stdout.setEncoding("utf8")
  child.stdout.on("data", (chunk) => {
    buffered += chunk
    let nl
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, nl)
      buffered = buffered.slice(nl + 1)
      waiting.shift()?.(line)
    }
  })
  const exited = new Promise((resolve) => child.on("exit", resolve))
  // Resolves at the attacker's first swap ("S ..."), so no operation runs before the attack is live.
  const started = new Promise((resolve, reject) => {
    waiting.push(resolve)
    exited.then(() => reject(new Error("attacker exited before its first swap")))
  })
  const ask = (command) =>
    new Promise((resolve, reject) => {
      waiting.push(resolve)
      child.stdin.write(command, (err) => err && reject(err))
      exited.then(() => reject(new Error(`attacker exited while asked '${command}'`)))
    })
  const parse = (line) => {
    const [tag, swaps, failures] = line.split(" ")
    return { tag, swaps: Number(swaps), failures: Number(failures) }
  }
  return {
    started,
    park: async () => {
      const r = parse(await ask("p"))
      return { swaps: r.swaps, failures: r.failures, home: r.tag === "P" }
    },
    resume: () => {
      child.stdin.write("r")
    },
    exchange: async () => parse(await ask("x")).tag === "x",
    stop: async () => {
      const r = parse(await ask("q"))
      await exited
      return { swaps: r.swaps, failures: r.failures }
    }
  }
}
