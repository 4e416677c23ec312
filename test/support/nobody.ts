/**
 * Running a child process as `nobody`, the one way every permission test does it.
 *
 * A test that runs as root proves nothing about permissions (root passes every check), so these
 * tests drop to uid/gid 65534 in a child. That child must not need anything from the checkout: a
 * newcomer's clone often sits under a home directory others cannot enter (mode 0700), and then
 * `nobody` can read neither `node_modules/` nor `build/`. So what the child needs is staged first,
 * world-readable, in a temporary directory shaped like an installed package: `package.json`, the
 * built addon at `build/Release/`, `node-gyp-build`, on request the library itself (`dist/`,
 * transpiled from `src/` as it is now, so the child runs the code under test and not a stale
 * build) and other packages, and the node binary when `nobody` cannot execute the one running the
 * tests (nvm installs under $HOME). One stage per test file, removed after it.
 *
 * When the tests already run unprivileged, the child runs as the same user, from the same stage.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { transpiledText } from "./transpile-cache.ts"
import { onFileEnd } from "./file-end.ts"

import { asRoot, NOBODY } from "./ids.ts"

export { asRoot, NOBODY } from "./ids.ts"

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

interface Stage {
  readonly dir: string
  readonly node: string
  readonly staged: Set<string>
}

let current: Stage | undefined

let nobodyBwrap: string | undefined

onFileEnd(() => {
  if (current) fs.rmSync(current.dir, { recursive: true, force: true })
  current = undefined
  nobodyBwrap = undefined
})

/** A directory of the stage and its missing parents, 0755 whatever the test's umask. */
const directory = (dir: string) => {
  if (fs.existsSync(dir)) return
  directory(path.dirname(dir))
  fs.mkdirSync(dir)
  fs.chmodSync(dir, 0o755)
}

/** Writes a file into the stage, world-readable (and executable when `executable`). */
const put = (to: string, write: (to: string) => void, executable = false) => {
  directory(path.dirname(to))
  write(to)
  fs.chmodSync(to, executable ? 0o755 : 0o644)
}
const copy = (from: string, to: string) => put(to, (t) => fs.copyFileSync(from, t), (fs.statSync(from).mode & 0o111) !== 0)

/**
 * The Node binary in the stage: a hard link where one can be made and others may already run the
 * file (only its directory is closed to them), else a copy. A copy is 120 MB written to disk for
 * every file that stages, which a loaded machine feels; a link is one directory entry, removed
 * with the stage like the rest.
 */
const stageNode = (from: string, to: string) => {
  if ((fs.statSync(from).mode & 0o005) === 0o005) {
    try {
      directory(path.dirname(to))
      fs.linkSync(from, to)
      return
    } catch {
      // Another file system, or a link the kernel refuses (protected_hardlinks): copy instead.
    }
  }
  copy(from, to)
}

/** A package's package.json and the JavaScript it runs (no sources, maps or type declarations). */
const stagePackage = (stage: Stage, name: string) => {
  const from = path.join(repo, "node_modules", name)
  const to = path.join(stage.dir, "node_modules", name)
  const visit = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(from, rel), { withFileTypes: true })) {
      const child = path.join(rel, entry.name)
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules") visit(child)
      } else if (entry.name === "package.json" || /\.(c|m)?js$/.test(entry.name)) {
        copy(path.join(from, child), path.join(to, child))
      }
    }
  }
  visit("")
}

/** `src/` as JavaScript in `dist/`, the way `tsc -p tsconfig.build.json` lays it out. */
const stageLibrary = (stage: Stage) => {
  const visit = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(repo, "src", rel), { withFileTypes: true })) {
      const child = path.join(rel, entry.name)
      if (entry.isDirectory()) visit(child)
      else if (entry.name.endsWith(".ts")) {
        const outputText = transpiledText(path.join(repo, "src", child))
        put(path.join(stage.dir, "dist", child.replace(/\.ts$/, ".js")), (t) => fs.writeFileSync(t, outputText))
      }
    }
  }
  visit("")
}

const canExecute = (program: string, args: ReadonlyArray<string> = ["-e", ""]) =>
  !asRoot || spawnSync(program, args, { uid: NOBODY, gid: NOBODY, cwd: os.tmpdir(), stdio: "ignore" }).status === 0

const ensureStage = (): Stage => {
  if (current) return current
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-nobody-"))
  fs.chmodSync(dir, 0o755)
  copy(path.join(repo, "package.json"), path.join(dir, "package.json"))
  const nodeGypBuild = createRequire(import.meta.url)("node-gyp-build") as { path: (dir: string) => string }
  copy(nodeGypBuild.path(repo), path.join(dir, "build", "Release", "pinnedfs.node"))
  // Under PREBUILDS_ONLY (CI's Node 22 and 24 passes) node-gyp-build looks in prebuilds/ only.
  const platform = `${process.platform}-${process.arch}`
  const prebuilt = path.join(repo, "prebuilds", platform)
  if (fs.existsSync(prebuilt)) {
    for (const f of fs.readdirSync(prebuilt)) copy(path.join(prebuilt, f), path.join(dir, "prebuilds", platform, f))
  }
  let node = process.execPath
  if (!canExecute(node)) {
    node = path.join(dir, "node")
    stageNode(process.execPath, node)
  }
  current = { dir, node, staged: new Set() }
  stagePackage(current, "node-gyp-build")
  return current
}

/**
 * A Node binary `nobody` can run: this one, or a copy in the world-readable stage when this one sits
 * in a directory closed to others (CI's Node 22 and 24 live under root's home).
 */
export const nodeForNobody = (): string => ensureStage().node

/**
 * A bubblewrap `nobody` can run: `bwrap` itself, or a copy in the stage's `bin/` when it sits in a
 * directory closed to others (`npm test` on a machine without bubblewrap fetches one into root's
 * cache, scripts/bubblewrap.mjs). One small executable; removed with the stage.
 */
export const bwrapForNobody = (bwrap: string): string => {
  if (!fs.existsSync(bwrap) || canExecute(bwrap, ["--version"])) return bwrap
  const to = path.join(ensureStage().dir, "bin", "bwrap")
  if (!fs.existsSync(to)) copy(bwrap, to)
  return to
}

/** The first `bwrap` on PATH (one `npm test` fetched, where the machine has none), or Debian's. */
export const bwrapOnPath = (): string =>
  (process.env["PATH"] ?? "/usr/bin:/bin")
    .split(":")
    .filter((d) => d.startsWith("/"))
    .map((d) => path.join(d, "bwrap"))
    .find((f) => {
      try {
        fs.accessSync(f, fs.constants.X_OK)
        return true
      } catch {
        return false
      }
    }) ?? "/usr/bin/bwrap"

/** The bubblewrap a `pinnedfs run` started as nobody finds: `bwrapForNobody` of the one on PATH. */
export const nobodysBwrap = (): string => (nobodyBwrap ??= bwrapForNobody(bwrapOnPath()))

/** PATH for a child run as nobody, with `nobodysBwrap`'s directory first. */
export const pathForNobody = (): string => `${path.dirname(nobodysBwrap())}:${process.env["PATH"] ?? ""}`

export interface NobodyRun {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs `script` (CommonJS, through `node -e`) from the stage, as nobody unless `user` is "self"
 * (a child that needs the staged library but not a drop of privileges). The script finds `native`
 * (the addon) and `stage` (the stage directory: `import(stage + "/dist/index.js")` when `library`
 * was asked for, `stage + "/node_modules/<name>"` for the `packages` asked for) already defined,
 * and its arguments in `process.argv.slice(1)`.
 */
export const runStaged = (
  script: string,
  options: {
    readonly args?: ReadonlyArray<string>
    readonly library?: boolean
    readonly packages?: ReadonlyArray<string>
    readonly timeout?: number
    readonly user?: "nobody" | "self"
    /** A command the child runs under, as its own child (`["strace", "-f", …]`). */
    readonly under?: ReadonlyArray<string>
  } = {}
): NobodyRun => {
  const stage = ensureStage()
  for (const name of [...(options.library ? ["dist"] : []), ...(options.packages ?? [])]) {
    if (stage.staged.has(name)) continue
    if (name === "dist") stageLibrary(stage)
    else stagePackage(stage, name)
    stage.staged.add(name)
  }
  const prelude =
    `const stage = ${JSON.stringify(stage.dir)};` +
    `const native = require(${JSON.stringify(path.join(stage.dir, "build", "Release", "pinnedfs.node"))});`
  const command = [...(options.under ?? []), stage.node, "-e", `${prelude}\n${script}`, ...(options.args ?? [])]
  const run = spawnSync(command[0]!, command.slice(1), {
    ...(asRoot && options.user !== "self" ? { uid: NOBODY, gid: NOBODY } : {}),
    cwd: stage.dir,
    encoding: "utf8",
    timeout: options.timeout ?? 60_000
  })
  if (run.error) throw run.error
  return { status: run.status, stdout: run.stdout, stderr: run.stderr }
}

/** {@link runStaged} as nobody. */
export const runAsNobody = (script: string, options: Omit<Parameters<typeof runStaged>[1] & object, "user"> = {}): NobodyRun =>
  runStaged(script, { ...options, user: "nobody" })

/** What one request or call answered in the child, and the uid the child ran as. */
export type NobodyAnswer =
  | { readonly ok: true; readonly value: unknown; readonly uid: number }
  | {
      readonly ok: false
      readonly code: string
      readonly refusal: string
      /** Effect's reason tag, as the library made it (PinnedRoot calls only). */
      readonly reason?: string
      readonly uid: number
    }

const answers = (run: NobodyRun): Array<NobodyAnswer> => {
  if (run.stderr !== "" || run.status !== 0) {
    throw new Error(`the child as nobody failed (status ${run.status}): ${run.stderr}`)
  }
  return JSON.parse(run.stdout) as Array<NobodyAnswer>
}

// Shared by both kinds of child: how one answer is written back.
const settle = `
  const settle = (p) => p.then(
    (value) => ({ ok: true, value: value instanceof Uint8Array ? Buffer.from(value).toString() : value === undefined ? null : value }),
    (e) => ({ ok: false, code: e.code, refusal: e.refusal, ...(e.reason === undefined ? {} : { reason: e.reason }) }))
  const reply = (out) => process.stdout.write(JSON.stringify(
    out.map((a) => ({ ...a, uid: process.getuid() })),
    (_k, v) => (typeof v === "bigint" ? String(v) : v)))
`

/**
 * Runs raw addon requests (`{ op: "readFile", path, ... }`, op by name) against a root pinned as
 * nobody with `strategy`, and answers each one's value or error, in order. `data` strings become
 * bytes and `flag` names the addon's flag numbers; byte answers come back as text.
 */
export const requestsAsNobody = (
  root: string,
  strategy: string,
  requests: ReadonlyArray<Record<string, unknown>>,
  under?: ReadonlyArray<string>
): Array<NobodyAnswer> =>
  answers(
    runAsNobody(
      `${settle}
      ;(async () => {
        const [root, strategy, requests] = process.argv.slice(1)
        const pinned = await native.pin(root, strategy)
        const out = []
        for (const r of JSON.parse(requests)) {
          const request = { ...r, op: native.ops[r.op] }
          if (typeof r.data === "string") request.data = Buffer.from(r.data)
          if (typeof r.flag === "string") request.flag = native.flags[r.flag]
          out.push(await settle(pinned.execute(request)))
        }
        pinned.close()
        reply(out)
      })().catch((e) => { console.error(e); process.exit(1) })`,
      { args: [root, strategy, JSON.stringify(requests)], ...(under === undefined ? {} : { under }) }
    )
  )

/**
 * Calls `PinnedRoot` methods (`{ method: "readFile", args: ["a.txt"] }`) on a root opened as nobody
 * with `strategy`, through the library as a user gets it, and answers each call's value or its
 * `PinnedFsError` (code, refusal and reason), in order.
 */
export const callsAsNobody = (
  root: string,
  strategy: string,
  calls: ReadonlyArray<{ readonly method: string; readonly args: ReadonlyArray<unknown> }>
): Array<NobodyAnswer> =>
  answers(
    runAsNobody(
      `${settle}
      ;(async () => {
        const [root, strategy, calls] = process.argv.slice(1)
        const { PinnedRoot } = await import(stage + "/dist/index.js")
        const pinned = await PinnedRoot.open(root, { strategy })
        const out = []
        for (const c of JSON.parse(calls)) out.push(await settle((async () => pinned[c.method](...c.args))()))
        pinned.close()
        reply(out)
      })().catch((e) => { console.error(e); process.exit(1) })`,
      { args: [root, strategy, JSON.stringify(calls)], library: true }
    )
  )
