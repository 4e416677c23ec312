/**
 * The real tools the dev tests run, from this package's own devDependencies (installed by `npm
 * ci`, nothing fetched at run time), and a flat ESLint config for a scratch workspace.
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

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
