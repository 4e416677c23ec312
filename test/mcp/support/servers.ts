/**
 * The two servers under test, driven as an MCP client drives them: the SDK's real `Client` over
 * stdio, each server a child process. `ours` is `pinnedfs mcp` from the sources as they are now
 * (transpiled once per test file into the package, so the addon and the SDK resolve as from
 * dist/); `reference` is `@modelcontextprotocol/server-filesystem`, installed as a dev dependency.
 */
import type { ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { type CallToolResult, ListRootsRequestSchema, type Root } from "@modelcontextprotocol/sdk/types.js"
import { onFileEnd } from "../../support/file-end.ts"
import { transpileSources } from "../../support/transpile.ts"

export const repo = path.resolve(import.meta.dirname, "..", "..", "..")

/** The reference server's entry point, from its own package.json. */
export const referenceBin = (() => {
  const pkg = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-filesystem/package.json")
  const { bin } = JSON.parse(fs.readFileSync(pkg, "utf8")) as { bin: Record<string, string> }
  return path.join(path.dirname(pkg), bin["mcp-server-filesystem"]!)
})()

let transpiled: string | undefined
onFileEnd(() => {
  if (transpiled !== undefined) fs.rmSync(transpiled, { recursive: true, force: true })
  transpiled = undefined
})

/** `pinnedfs` as a command line: node and the transpiled bin. */
export const oursBin = (): string => {
  transpiled ??= transpileSources("mcp")
  return path.join(transpiled, "cli", "main.js")
}

export interface Server {
  readonly client: Client
  /** What the server printed on stderr so far. */
  readonly stderr: () => string
  readonly call: (name: string, args?: Record<string, unknown>) => Promise<CallToolResult>
  /** Roots the client answers `roots/list` with; setting them sends `roots/list_changed`. */
  readonly setRoots: (roots: ReadonlyArray<Root>) => Promise<void>
  readonly close: () => Promise<void>
  /** The child's exit: its code, once it has exited. */
  readonly exited: Promise<number | null>
}

export interface StartOptions {
  /** The program to run `command` with (default: this node). */
  readonly executable?: string | undefined
  /** Declare the roots capability and answer `roots/list` with these. */
  readonly roots?: ReadonlyArray<Root> | undefined
  readonly cwd?: string | undefined
  readonly env?: Record<string, string> | undefined
}

/** Starts a server (`command` + `args`) and connects a client to it. */
export const start = async (command: ReadonlyArray<string>, options: StartOptions = {}): Promise<Server> => {
  const transport = new StdioClientTransport({
    command: options.executable ?? process.execPath,
    args: [...command],
    stderr: "pipe",
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.env === undefined ? {} : { env: options.env })
  })
  let err = ""
  transport.stderr?.on("data", (d: Buffer) => {
    err += d.toString()
  })
  let roots = options.roots ?? []
  const client = new Client(
    { name: "pinnedfs-test", version: "1.0.0" },
    options.roots === undefined ? {} : { capabilities: { roots: { listChanged: true } } }
  )
  if (options.roots !== undefined) client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [...roots] }))
  let exitedResolve: (code: number | null) => void = () => {}
  const exited = new Promise<number | null>((resolve) => {
    exitedResolve = resolve
  })
  await client.connect(transport)
  // The transport spawned the child and exposes only its pid; its exit code is read off the
  // process object the transport keeps (the SDK's own field), for the tests of how a server ends.
  const child = (transport as unknown as { _process?: ChildProcess })._process
  if (child === undefined || child.exitCode !== null) exitedResolve(child?.exitCode ?? null)
  else child.once("exit", (code) => exitedResolve(code))
  return {
    client,
    stderr: () => err,
    call: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    setRoots: async (next) => {
      roots = next
      await client.sendRootsListChanged()
    },
    close: () => client.close(),
    exited
  }
}

export const startOurs = (args: ReadonlyArray<string>, options?: StartOptions): Promise<Server> =>
  start([oursBin(), "mcp", ...args], options)
export const startReference = (args: ReadonlyArray<string>, options?: StartOptions): Promise<Server> =>
  start([referenceBin, ...args], options)

/** The text of a tool result's first block. */
export const textOf = (r: CallToolResult): string => {
  const first = r.content[0]
  return first !== undefined && first.type === "text" ? first.text : JSON.stringify(r.content)
}
