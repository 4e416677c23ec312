/**
 * Prettier as an in-process fixer: each allowlisted file is read through the façade, formatted
 * with Prettier's `format`, and written back through the façade when it changed.
 *
 * No configuration file is looked up: Prettier's config resolution reads the disk itself, around
 * the façade. Pass the options (or what `prettier.resolveConfig` gave you) as `options`.
 *
 * @since 0.1.0
 */
import type { Capability } from "../Capability.ts"
import type { Delta } from "../Delta.ts"
import { loadOptional } from "./optional.ts"

/**
 * @since 0.1.0
 * @category models
 */
export interface PrettierFixerOptions {
  readonly name?: string | undefined
  readonly scope: ReadonlyArray<string>
  readonly selectors?: ReadonlyArray<string> | undefined
  /** Prettier's options; `filepath` is set per file (it picks the parser). */
  readonly options?: Readonly<Record<string, unknown>> | undefined
}

interface PrettierModule {
  format(source: string, options: Record<string, unknown>): Promise<string>
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const prettierFixer = (o: PrettierFixerOptions): Capability => ({
  name: o.name ?? "prettier",
  scope: o.scope,
  selectors: o.selectors,
  mayCreate: [],
  run: async (access) => {
    const prettier = await loadOptional<PrettierModule>("prettier", () => import("prettier"))
    const changes: Array<{ path: string }> = []
    const diagnostics: Array<NonNullable<Delta["diagnostics"]>[number]> = []
    for (const path of access.scope) {
      const text = await access.read(path)
      let formatted: string
      try {
        formatted = await prettier.format(text, { ...o.options, filepath: path })
      } catch (e) {
        const undecided = (e as { name?: unknown } | null)?.name === "UndefinedParserError"
        diagnostics.push({
          severity: undecided ? "WARNING" : "ERROR",
          path,
          message: undecided
            ? "prettier has no parser for this file: left as it is"
            : `prettier could not format it: ${e instanceof Error ? e.message : String(e)}`
        })
        continue
      }
      if (formatted !== text) {
        await access.write(path, formatted)
        changes.push({ path })
      }
    }
    return { changes, diagnostics } satisfies Delta
  }
})
