// The shared conformance and bad-input suites, run over the path-based fallback: on a quiet tree it
// must answer exactly as the native extension does. It has no directory programs (mkdirs/rmdirs).
import { PathAtomicFileSystem } from "../../src/fallback/index.ts"
import { runBadInput } from "../effect/badInput.ts"
import { runConformance } from "../effect/conformance.ts"

runConformance("PathAtomicFileSystem", (options) => PathAtomicFileSystem.make(options), { directoryPrograms: false })
runBadInput("PathAtomicFileSystem bad input", (options) => PathAtomicFileSystem.make(options))
