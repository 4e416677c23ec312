/**
 * ESLint as an in-process fixer or checker: each allowlisted file is read through the façade and
 * linted with the `ESLint` class (`lintText`, `fix`); fixed output is written back through the
 * façade. Remaining problems become the delta's diagnostics (severity 2 an `ERROR`, 1 a
 * `WARNING`), so a `check` step with lint errors fails.
 *
 * ESLint finds and loads its flat config (`eslint.config.js`) from `cwd` by itself, with Node's
 * own file access: configuration is the engine's business, file contents are the façade's. To keep
 * configuration off the disk too, pass `overrideConfigFile: true` and `overrideConfig`.
 *
 * @since 0.1.0
 */
import * as nodePath from "node:path"
import type { Capability } from "../Capability.ts"
import type { Delta } from "../Delta.ts"
import { loadOptional } from "./optional.ts"

/**
 * @since 0.1.0
 * @category models
 */
export interface EslintOptions {
  readonly name?: string | undefined
  readonly scope: ReadonlyArray<string>
  readonly selectors?: ReadonlyArray<string> | undefined
  /** Apply fixes (default); `false` to only report, as a check. */
  readonly fix?: boolean | undefined
  /** Where the config is looked up; default the workspace directory. */
  readonly cwd?: string | undefined
  /** As ESLint's option: a config file path, `true` for none. */
  readonly overrideConfigFile?: string | boolean | undefined
  /** As ESLint's option: a flat config object or array, applied on top. */
  readonly overrideConfig?: unknown
}

interface LintMessage {
  readonly severity: number
  readonly message: string
  readonly ruleId: string | null
  readonly line?: number
  readonly column?: number
}
interface LintResult {
  readonly output?: string
  readonly messages: ReadonlyArray<LintMessage>
}
interface EslintModule {
  ESLint: new (
    options: Record<string, unknown>
  ) => {
    lintText(code: string, options: { filePath: string; warnIgnored: boolean }): Promise<Array<LintResult>>
  }
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const eslintFixer = (o: EslintOptions): Capability => {
  const fix = o.fix !== false
  return {
    name: o.name ?? (fix ? "eslint --fix" : "eslint"),
    scope: o.scope,
    selectors: o.selectors,
    mayCreate: [],
    run: async (access, context) => {
      const { ESLint } = await loadOptional<EslintModule>("eslint", () => import("eslint") as Promise<EslintModule>)
      const cwd = o.cwd ?? context.workspaceDir
      const eslint = new ESLint({
        cwd,
        fix,
        ...(o.overrideConfigFile === undefined ? {} : { overrideConfigFile: o.overrideConfigFile }),
        ...(o.overrideConfig === undefined ? {} : { overrideConfig: o.overrideConfig })
      })
      const changes: Array<{ path: string }> = []
      const diagnostics: Array<NonNullable<Delta["diagnostics"]>[number]> = []
      for (const path of access.scope) {
        const text = await access.read(path)
        const [result] = await eslint.lintText(text, { filePath: nodePath.join(cwd, path), warnIgnored: false })
        if (result === undefined) continue
        if (fix && result.output !== undefined && result.output !== text) {
          await access.write(path, result.output)
          changes.push({ path })
        }
        for (const m of result.messages) {
          const at = m.line === undefined ? "" : `${m.line}:${m.column ?? 0} `
          diagnostics.push({
            severity: m.severity >= 2 ? "ERROR" : "WARNING",
            path,
            message: `${at}${m.message}${m.ruleId ? ` (${m.ruleId})` : ""}`
          })
        }
      }
      return { changes, diagnostics } satisfies Delta
    }
  }
}
