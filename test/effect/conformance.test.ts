import { NodeAtomicFileSystem } from "../../src/effect/index.ts"
import { strategies } from "../support/strategies.ts"
import { runConformance } from "./conformance.ts"

for (const strategy of strategies) {
  runConformance(`NodeAtomicFileSystem (${strategy})`, (options) => NodeAtomicFileSystem.make({ ...options, strategy }))
}
