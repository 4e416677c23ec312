/**
 * A team's fixer pipeline, committed with the code: named steps in `pinnedfs.config.json`,
 * `pinnedfs.config.js` (its default export) or the `"pinnedfs"` key of `package.json`.
 *
 * ```json
 * { "steps": [
 *   { "name": "lint", "scope": ["src/**\/*.ts"], "command": ["eslint", "--fix"] },
 *   { "name": "format", "scope": ["src/**", "*.md"], "command": ["prettier", "--write"], "timeout": 60000 }
 * ] }
 * ```
 *
 * A step has `name`, `scope` (globs), `command` (the program and its arguments, as an array: no
 * shell parses it), and optionally `mayCreate` (globs; file names when confined), `deny` (globs),
 * `confine` (boolean) and `timeout` (milliseconds). Everything is checked before anything runs,
 * and each error names the file, the key and the value. More than one of the three places holding
 * a configuration is an error too: which one counts would be a guess.
 *
 * The JSON files and `package.json` are read through the pinned root (no link followed). The
 * JavaScript file is code: it is imported by Node like `eslint.config.js` is, after the pinned
 * root has confirmed it is a regular file in the workspace and not a link.
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import picomatch from "picomatch"
import { PinnedFsError } from "../internal/errors.ts"
import type { PinnedRoot } from "../PinnedRoot.ts"
import { globList } from "./globs.ts"
import { escaped } from "./quote.ts"

/**
 * @since 0.1.0
 * @category models
 */
export interface ConfiguredStep {
  readonly name: string
  readonly scope: ReadonlyArray<string>
  readonly command: ReadonlyArray<string>
  readonly mayCreate: ReadonlyArray<string>
  readonly deny: ReadonlyArray<string>
  readonly confine: boolean
  readonly timeout: number | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Configuration {
  /** Where it was read, relative to the workspace (`package.json#pinnedfs` for the key). */
  readonly source: string
  readonly steps: ReadonlyArray<ConfiguredStep>
}

/**
 * A configuration that cannot be used: which file, which key, what was wrong with the value.
 *
 * @since 0.1.0
 * @category errors
 */
export class ConfigurationError extends Error {
  override readonly name = "ConfigurationError"
}

const shown = (value: unknown): string => {
  let text: string
  try {
    text = typeof value === "string" ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value))
  } catch {
    text = String(value)
  }
  return escaped(text.length > 120 ? `${text.slice(0, 117)}...` : text)
}

const stepKeys = ["name", "scope", "command", "mayCreate", "deny", "confine", "timeout"] as const

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Checks a configuration's value (what the file holds) and answers its steps.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseConfiguration = (value: unknown, source: string): Configuration => {
  const fail = (key: string, what: string, got: unknown): never => {
    throw new ConfigurationError(`${source}: ${key}: ${what}, got ${shown(got)}`)
  }
  if (!isRecord(value)) return fail("(top level)", 'expected an object with a "steps" array', value)
  for (const key of Object.keys(value)) if (key !== "steps") fail(key, 'unknown key (the only one is "steps")', value[key])
  const steps = value["steps"]
  if (!Array.isArray(steps) || steps.length === 0) return fail("steps", "expected a non-empty array of steps", steps)
  const names = new Set<string>()
  const out = steps.map((step, i): ConfiguredStep => {
    const at = `steps[${i}]`
    if (!isRecord(step)) return fail(at, "expected an object", step)
    for (const key of Object.keys(step)) {
      if (!(stepKeys as ReadonlyArray<string>).includes(key))
        fail(`${at}.${key}`, `unknown key (expected one of ${stepKeys.join(", ")})`, step[key])
    }
    const name = step["name"]
    if (typeof name !== "string" || name === "" || /[\p{Cc}\p{Cf}]/u.test(name)) {
      fail(`${at}.name`, "expected a non-empty name without control characters", name)
    }
    if (names.has(name as string)) fail(`${at}.name`, "a step of that name comes earlier: names must be unique", name)
    names.add(name as string)
    const globs = (key: string, required: boolean): ReadonlyArray<string> => {
      const v = step[key]
      if (v === undefined && !required) return []
      if (!Array.isArray(v) || (required && v.length === 0) || v.some((g) => typeof g !== "string")) {
        return fail(`${at}.${key}`, required ? "expected a non-empty array of globs" : "expected an array of globs", v)
      }
      try {
        globList(v, key)
      } catch (e) {
        const why = e instanceof PinnedFsError ? e.description : (e as Error).message
        fail(`${at}.${key}`, why.replace(/^.*?glob/, "glob"), v)
      }
      return v as ReadonlyArray<string>
    }
    const scope = globs("scope", true)
    const mayCreate = globs("mayCreate", false)
    const deny = globs("deny", false)
    const command = step["command"]
    if (!Array.isArray(command) || command.length === 0 || command.some((c) => typeof c !== "string" || c === "")) {
      fail(`${at}.command`, "expected the program and its arguments as a non-empty array of strings (no shell parses it)", command)
    }
    const confine = step["confine"] ?? false
    if (typeof confine !== "boolean") fail(`${at}.confine`, "expected true or false", confine)
    if (confine === true) {
      const glob = mayCreate.find((g) => picomatch.scan(g).isGlob)
      if (glob !== undefined) fail(`${at}.mayCreate`, "a confined step's mayCreate names files, not globs", glob)
    }
    const timeout = step["timeout"]
    if (timeout !== undefined && (typeof timeout !== "number" || !Number.isSafeInteger(timeout) || timeout < 1)) {
      fail(`${at}.timeout`, "expected a positive whole number of milliseconds", timeout)
    }
    return {
      name: name as string,
      scope,
      command: command as ReadonlyArray<string>,
      mayCreate,
      deny,
      confine: confine as boolean,
      timeout: timeout as number | undefined
    }
  })
  return { source, steps: out }
}

const readJson = async (root: PinnedRoot, file: string): Promise<unknown> => {
  const text = (await root.readFile(file, { limit: 1024 * 1024 })).toString("utf8")
  try {
    return JSON.parse(text) as unknown
  } catch (e) {
    throw new ConfigurationError(`${file}: not valid JSON (${(e as Error).message})`)
  }
}

const present = async (root: PinnedRoot, file: string): Promise<boolean> => {
  try {
    return await root.exists(file)
  } catch {
    return true // there in some form (a link on the way): reading it will say what is wrong
  }
}

/**
 * The workspace's configuration, or `undefined` when it has none.
 *
 * @since 0.1.0
 * @category loading
 */
export const loadConfiguration = async (root: PinnedRoot): Promise<Configuration | undefined> => {
  const found: Array<{ source: string; load: () => Promise<unknown> }> = []
  if (await present(root, "pinnedfs.config.json"))
    found.push({ source: "pinnedfs.config.json", load: () => readJson(root, "pinnedfs.config.json") })
  if (await present(root, "pinnedfs.config.js")) {
    found.push({
      source: "pinnedfs.config.js",
      load: async () => {
        const info = await root.stat("pinnedfs.config.js")
        if (info.type !== "File") throw new ConfigurationError(`pinnedfs.config.js: not a regular file (${info.type})`)
        const module = (await import(pathToFileURL(path.join(root.path, "pinnedfs.config.js")).href)) as { default?: unknown }
        return module.default
      }
    })
  }
  if (await present(root, "package.json")) {
    const pkg = await readJson(root, "package.json")
    if (isRecord(pkg) && pkg["pinnedfs"] !== undefined) found.push({ source: "package.json#pinnedfs", load: async () => pkg["pinnedfs"] })
  }
  if (found.length === 0) return undefined
  if (found.length > 1) {
    throw new ConfigurationError(`${found.map((f) => f.source).join(" and ")} both configure pinnedfs: keep one`)
  }
  const [only] = found
  return parseConfiguration(await only!.load(), only!.source)
}
