// The shared conformance and bad-input suites, run over the path-based fallback: on a quiet tree it
// must answer exactly as the native extension does. The cases it loses are skipped one by one,
// each with its reason printed.
import { PathAtomicFileSystem } from "../../src/fallback/index.ts"
import { runBadInput } from "../effect/badInput.ts"
import { runConformance } from "../effect/conformance.ts"

runConformance("PathAtomicFileSystem", (options) => PathAtomicFileSystem.make(options), {
  withoutDirectoryPrograms: "the path-based fallback has no mkdirs/rmdirs: they are the native executor's extensions"
})
runBadInput("PathAtomicFileSystem bad input", (options) => PathAtomicFileSystem.make(options))
