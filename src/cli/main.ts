#!/usr/bin/env node
/**
 * The `pinnedfs` command: a small dispatcher. Each subcommand lives in its own module and
 * registers itself on the program.
 *
 * @since 0.1.0
 */
import { createRequire } from "node:module"
import { Command, CommanderError } from "commander"
import { registerMcp } from "../mcp/command.ts"
import { registerFix } from "./fix.ts"
import { dropWritesToClosedPipes } from "./pipes.ts"
import { registerRun } from "./run.ts"

const { version } = createRequire(import.meta.url)("../../package.json") as { version: string }

dropWritesToClosedPipes()

const program = new Command("pinnedfs")
  .description("File operations confined to a pinned workspace directory.")
  .version(version)
  .enablePositionalOptions()
  .exitOverride()

registerFix(program)
registerRun(program)
registerMcp(program, version)

try {
  await program.parseAsync(process.argv)
} catch (e) {
  if (!(e instanceof CommanderError)) throw e
  // Help asked for and the version are answers; anything else commander refuses (no command given
  // included) is a usage error.
  const answered = e.code === "commander.helpDisplayed" || e.code === "commander.version"
  process.exitCode = answered ? 0 : 2
}
