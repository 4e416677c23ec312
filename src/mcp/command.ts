/**
 * `pinnedfs mcp`: the stdio MCP server, as a subcommand of the package's bin. It stands where
 * `npx @modelcontextprotocol/server-filesystem DIR...` stands in an MCP client's configuration.
 * The server's modules (and the SDK) load only when the subcommand runs.
 *
 * @since 0.1.0
 */
import { type Command, InvalidArgumentError, Option } from "commander"

const positiveInt = (value: string): number => {
  const n = Number(value)
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError("expected a positive integer")
  return n
}

/**
 * Registers `mcp` on `program` (the `pinnedfs` bin's dispatcher calls this).
 *
 * @since 0.1.0
 * @category commands
 */
export const registerMcp = (program: Command, version: string): Command =>
  program
    .command("mcp")
    .summary("an MCP filesystem server (stdio) confined to pinned directories")
    .description(
      "Serve the tools of @modelcontextprotocol/server-filesystem over stdio, every call resolved beneath " +
        "a pinned directory: no symbolic link, hard link, '..', mount or race reaches outside. Directories come " +
        "from the arguments, or from the client's roots when it declares them. See docs/mcp.md for where it " +
        "answers differently from the reference server."
    )
    .argument("[directories...]", "the allowed directories")
    .option("--read-only", "offer only the tools that read (no write, edit, create or move)")
    .option("--sync", "fsync each file written and its directory (the reference server never does)")
    .addOption(
      new Option("--strategy <strategy>", "how paths are resolved beneath each directory")
        .choices(["auto", "openat2", "walk"])
        .default("auto")
    )
    .option("--max-entries <n>", "most entries directory_tree or search_files walks in one call", positiveInt, 1_000_000)
    .action(
      async (
        directories: Array<string>,
        options: { readOnly?: boolean; sync?: boolean; strategy: "auto" | "openat2" | "walk"; maxEntries: number }
      ) => {
        const [{ StdioServerTransport }, { startServer }] = await Promise.all([
          import("@modelcontextprotocol/sdk/server/stdio.js"),
          import("./server.ts")
        ])
        const running = await startServer(
          {
            directories,
            readOnly: options.readOnly === true,
            sync: options.sync === true,
            strategy: options.strategy,
            maxEntries: options.maxEntries,
            version,
            warn: (line) => process.stderr.write(`${line}\n`)
          },
          new StdioServerTransport()
        )
        process.exitCode = running === undefined ? 1 : await running.closed
      }
    )
