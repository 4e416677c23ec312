/**
 * The server: the SDK's `McpServer` with the tool table registered, the allowed directories pinned
 * from the command line and replaced by the client's roots (at initialization and on every
 * `roots/list_changed`), over any transport (stdio for the command).
 *
 * @since 0.1.0
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { type Root, RootsListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import type { Strategy } from "../PinnedRoot.ts"
import { AllowedDirectories, fromArguments, fromRoots } from "./allowed.ts"
import type { Context } from "./context.ts"
import { ToolFailure } from "./failures.ts"
import { handlers } from "./handlers.ts"
import { isReadTool, tools } from "./tools.ts"

/** @since 0.1.0 @category models */
export interface ServerOptions {
  readonly directories: ReadonlyArray<string>
  readonly readOnly: boolean
  readonly strategy: Strategy
  readonly sync: boolean
  readonly maxEntries: number
  readonly version: string
  /** Where diagnostics go (stderr for the command: stdout carries the protocol). */
  readonly warn: (line: string) => void
}

/** @since 0.1.0 @category models */
export interface Running {
  /** Resolves when the connection closes, with the exit code the command should end with. */
  readonly closed: Promise<number>
  readonly close: () => Promise<void>
}

const noDirectories =
  "Server cannot operate: No allowed directories available. Server was started without command-line directories and client either does not support MCP roots protocol or provided empty roots. Please either: 1) Start server with directory arguments, or 2) Use a client that supports MCP roots protocol and provides valid root directories."

/** The session's allowed directories: one set in force, replaced whole, the old one closed. */
class Session {
  constructor(private current: AllowedDirectories) {}
  get allowed(): AllowedDirectories {
    return this.current
  }
  replace(next: AllowedDirectories): void {
    const old = this.current
    this.current = next
    old.close()
  }
  close(): void {
    this.current.close()
    this.current = new AllowedDirectories([])
  }
}

const register = (server: McpServer, ctx: Context, readOnly: boolean): void => {
  for (const spec of tools) {
    const writes = !isReadTool(spec)
    const handler = handlers[spec.name]
    const tool = server.registerTool(
      spec.name,
      {
        title: spec.title,
        description: spec.description,
        inputSchema: spec.inputSchema,
        outputSchema: spec.outputSchema,
        annotations: spec.annotations
      },
      // Decided once, not per call: a disabled tool never reaches its callback, and the refusing
      // one stands on its own all the same.
      (readOnly && writes
        ? async () => {
            throw new ToolFailure(`Access denied - read-only server: ${spec.name} changes files (pinnedfs mcp --read-only)`)
          }
        : (args: unknown) => handler(ctx, args as never)) as never
    )
    if (readOnly && writes) tool.disable()
  }
}

/**
 * Starts a server on `transport`. Answers `undefined` (after saying why) when none of the
 * command line's directories can be used, as the reference exits at start-up.
 *
 * @since 0.1.0
 * @category constructors
 */
export const startServer = async (options: ServerOptions, transport: Transport): Promise<Running | undefined> => {
  const { warn } = options
  if (options.directories.length === 0) {
    warn("Usage: pinnedfs mcp [--read-only] [allowed-directory] [additional-directories...]")
    warn("Note: Allowed directories can be provided via:")
    warn("  1. Command-line arguments (shown above)")
    warn("  2. MCP roots protocol (if client supports it)")
    warn("At least one directory must be provided by EITHER method for the server to operate.")
  }
  const pin = { strategy: options.strategy, warn }
  const initial = await fromArguments(options.directories, pin)
  if (initial.spellings.length === 0 && options.directories.length > 0) {
    warn("Error: None of the specified directories are accessible")
    return undefined
  }
  const session = new Session(initial)
  const ctx: Context = { allowed: () => session.allowed, sync: options.sync, maxEntries: options.maxEntries }
  const server = new McpServer({ name: "pinnedfs-filesystem-server", version: options.version })
  register(server, ctx, options.readOnly)

  let exitCode = 0
  let closedResolve: (code: number) => void = () => {}
  const closed = new Promise<number>((resolve) => {
    closedResolve = resolve
  })

  const fromClient = async (roots: ReadonlyArray<Root>): Promise<void> => {
    const next = await fromRoots(roots, pin)
    if (next.spellings.length === 0) {
      warn("No valid root directories provided by client")
      return
    }
    session.replace(next)
    warn(`Updated allowed directories from MCP roots: ${next.spellings.length} valid directories`)
  }
  const askRoots = async (what: string): Promise<void> => {
    try {
      const response = await server.server.listRoots()
      if (response && "roots" in response) await fromClient(response.roots)
      else warn("Client returned no roots set, keeping current settings")
    } catch (e) {
      warn(`${what}: ${e instanceof Error ? e.message : String(e)}`)
    }
  }
  server.server.setNotificationHandler(RootsListChangedNotificationSchema, () => askRoots("Failed to request roots from client"))
  server.server.oninitialized = () => {
    if (server.server.getClientCapabilities()?.roots) {
      void askRoots("Failed to request initial roots from client")
    } else if (session.allowed.spellings.length > 0) {
      warn(`Client does not support MCP Roots, using allowed directories set from server args: ${session.allowed.texts.join(", ")}`)
    } else {
      // The reference throws here, and its process dies of the unhandled rejection.
      warn(noDirectories)
      exitCode = 1
      void server.close()
    }
  }
  server.server.onclose = () => {
    session.close()
    closedResolve(exitCode)
  }
  await server.connect(transport)
  warn(`pinnedfs MCP filesystem server running on stdio (${session.allowed.spellings.length} allowed directories, pinned)`)
  if (session.allowed.spellings.length === 0)
    warn("Started without allowed directories - waiting for client to provide roots via MCP protocol")
  return { closed, close: () => server.close() }
}
