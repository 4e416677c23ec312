/**
 * The real tools the dev tests run, from this package's own devDependencies (installed by `npm
 * ci`, nothing fetched at run time), and a flat ESLint config for a scratch workspace.
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import type { Confinement } from "../../../src/confine/index.ts"
import { eslintFixer, externalFixer, Step } from "../../../src/dev/index.ts"

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..")
const bin = (name: string): string => {
  const at = path.join(repo, "node_modules", ".bin", name)
  if (!fs.existsSync(at)) throw new Error(`${name} is not installed: run npm ci`)
  return at
}
export const tools = { eslint: bin("eslint"), prettier: bin("prettier"), biome: bin("biome") }

const require = createRequire(import.meta.url)

/**
 * An `eslint.config.js` for a scratch workspace outside the repository: the TypeScript parser is
 * imported by absolute URL, since the workspace has no node_modules of its own. Only fixable rules,
 * plus `no-debugger`, which ESLint cannot fix.
 */
export const eslintConfig = (): string => {
  const parser = pathToFileURL(require.resolve("@typescript-eslint/parser")).href
  return [
    `import parser from ${JSON.stringify(parser)}`,
    "export default [{",
    '  files: ["**/*.ts"],',
    "  languageOptions: { parser },",
    '  rules: { "prefer-const": "error", "no-var": "error", curly: "error", "object-shorthand": "error", "no-debugger": "error" }',
    "}]",
    ""
  ].join("\n")
}

/**
 * The plan edit(a.ts) → eslint --fix → write → prettier --write → check over `scope`, the tools
 * confined by `confine` when one is given, and the step statuses it ends with when all goes well.
 */
export const toolPlan = (scope: ReadonlyArray<string>, edited: string, confine?: Confinement): Array<Step.Step> => [
  Step.edit("edit a.ts", (e) => e.write("src/a.ts", edited)),
  Step.fix("eslint --fix", externalFixer({ command: tools.eslint, args: ["--fix"], scope, confine })),
  Step.write(),
  Step.fix("prettier --write", externalFixer({ command: tools.prettier, args: ["--write"], scope, confine })),
  Step.check("check", eslintFixer({ scope, fix: false }))
]
export const toolPlanOk = [
  ["edit a.ts", "ok"],
  ["eslint --fix", "ok"],
  ["write", "ok"],
  ["prettier --write", "ok"],
  ["check", "ok"]
]
