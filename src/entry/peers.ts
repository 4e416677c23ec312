/**
 * The published entry points that need optional peer dependencies (`pinnedfs/effect`,
 * `pinnedfs/kernel`, `pinnedfs/fallback`) start here. ESM links every static import before it runs
 * any code, so an entry point that imported `effect` itself would fail with Node's bare "Cannot
 * find package 'effect'" before it could say what is missing and why. These check the peers first,
 * then load the implementation synchronously (`require` of an ES module, which every Node line
 * the package supports can do), so each entry point keeps its named exports and still loads
 * from CommonJS.
 *
 * @internal
 */
import { createRequire } from "node:module"

interface Manifest {
  readonly peerDependencies?: Readonly<Record<string, string>>
}

/**
 * Loads `implementation` (relative to `from`) once every peer in `peers` resolves from `from`;
 * otherwise throws an error that names the entry point, the missing peers and the install command.
 */
export const loadWithPeers = <A>(options: {
  readonly entry: string
  readonly peers: ReadonlyArray<string>
  readonly from: string
  readonly resolve: (specifier: string) => string
  readonly implementation: string
}): A => {
  const require = createRequire(options.from)
  const missing: Array<{ readonly name: string; readonly cause: unknown }> = []
  for (const name of options.peers) {
    try {
      options.resolve(name)
    } catch (cause) {
      missing.push({ name, cause })
    }
  }
  if (missing.length > 0) {
    const manifest = require("../../package.json") as Manifest
    const install = missing.map(({ name }) => `${name}@"${manifest.peerDependencies?.[name] ?? "latest"}"`)
    const names = missing.map(({ name }) => name).join(" and ")
    const one = missing.length === 1
    throw new Error(
      `${options.entry} needs ${names}, ${one ? "an optional peer dependency" : "optional peer dependencies"} of ` +
        `pinnedfs that ${one ? "is" : "are"} not installed. Install ${one ? "it" : "them"} beside pinnedfs: ` +
        `npm install ${install.join(" ")}`,
      { cause: missing[0]!.cause }
    )
  }
  return require(options.implementation) as A
}
