import { NodeAtomicFileSystem } from "../../src/effect/index.ts"
import { strategies } from "../support/strategies.ts"
import { runBadInput } from "./badInput.ts"

for (const strategy of strategies) {
  runBadInput(`NodeAtomicFileSystem bad input (${strategy})`, (options) => NodeAtomicFileSystem.make({ ...options, strategy }))
}
