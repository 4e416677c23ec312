#!/usr/bin/env node
// `pinnedfs mcp` against the reference MCP filesystem server (@modelcontextprotocol/server-filesystem,
// the dev dependency), driven the way a client drives them: the SDK's Client over stdio, one awaited
// tool call at a time. Each server gets its own copy of the same small tree. Per scenario: a warm-up,
// then rounds of calls taken in turn server by server (so load on the machine falls on all of them
// alike), the median round as calls per second, and the server's own CPU time per call (its
// /proc/PID/stat utime + stime over the round, all its threads). The ratio is against the
// reference in the same run.
//
//   node scripts/bench/mcp.mjs [--quick]        (or: npm run bench -- --only mcp)
//
// Scenarios: read_text_file of a 4 KiB file; write_file of 4 KiB over an existing file (both
// servers publish by rename; neither fsyncs, pinnedfs's default, as the reference); plus
// get_file_info and list_directory of a 64-entry directory for context.
//
// Two more servers give the floor under both (read and write only): the SDK's McpServer with the
// same tool table, answering every call from memory with the answer pinnedfs mcp gives (the
// protocol's own cost: JSON-RPC over a pipe, the SDK's schema checks, the answer serialized), and
// the same after one trip to the thread pool for a trivial system call (fs.promises.stat of the
// directory): the least a server that does its file work off the JavaScript thread can cost.
//
// Then the same reads and writes in this process without the protocol, each server's own code for
// the file work of one call: the reference's exported validatePath + readFileContent /
// writeFileContent (its lib.js), pinnedfs mcp's locate + one trip to the addon. What the two
// servers share per call (JSON-RPC over a pipe, the SDK's schema checks) is the difference between
// these figures and the ones above.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"

const repo = path.resolve(fileURLToPath(new URL("../..", import.meta.url)))
const referenceBin = path.join(repo, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
const oursBin = path.join(repo, "dist/cli/main.js")

/**
 * The floor servers (`--serve-floor answer|trip DIR`): the SDK's McpServer with pinnedfs mcp's tool
 * table; read_text_file answers the 4 KiB file's text, read once at start, write_file its success
 * line. `trip` first awaits one fs.promises.stat of DIR.
 */
const serveFloor = async (mode, root) => {
  const { McpServer } = await import("@modelcontextprotocol/sdk/server/mcp.js")
  const { StdioServerTransport } = await import("@modelcontextprotocol/sdk/server/stdio.js")
  const { tools } = await import(path.join(repo, "dist/mcp/tools.js"))
  const text = fs.readFileSync(path.join(root, "read.txt"), "utf8")
  const server = new McpServer({ name: "pinnedfs-bench-floor", version: "0.0.0" })
  for (const spec of tools) {
    const { name, title, description, inputSchema, outputSchema, annotations } = spec
    server.registerTool(name, { title, description, inputSchema, outputSchema, annotations }, async (args) => {
      if (mode === "trip") await fs.promises.stat(root)
      const answer = name === "write_file" ? `Successfully wrote to ${args.path}` : text
      return { content: [{ type: /** @type {const} */ ("text"), text: answer }], structuredContent: { content: answer } }
    })
  }
  await server.connect(new StdioServerTransport())
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

const ticks = 100 // USER_HZ: /proc/PID/stat counts CPU time in clock ticks of 10 ms
const cpuMsOf = (pid) => {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")
  // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after "pid (comm) ".
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticks
}

const layout = (root) => {
  fs.writeFileSync(path.join(root, "read.txt"), "r".repeat(4096))
  fs.writeFileSync(path.join(root, "write.txt"), "w".repeat(4096))
  fs.mkdirSync(path.join(root, "dir"))
  for (let i = 0; i < 64; i++) fs.writeFileSync(path.join(root, "dir", `f${String(i).padStart(2, "0")}.txt`), "x")
}

const connect = async (name, args) => {
  const transport = new StdioClientTransport({ command: process.execPath, args, stderr: "ignore" })
  const client = new Client({ name: "pinnedfs-bench", version: "1.0.0" })
  await client.connect(transport)
  return { name, client, pid: transport.pid, close: () => client.close() }
}

const content = "c".repeat(4096)
const scenarios = [
  { id: "read", title: "read_text_file, 4 KiB", call: (root) => ({ name: "read_text_file", arguments: { path: `${root}/read.txt` } }) },
  {
    id: "write",
    title: "write_file, 4 KiB over an existing file",
    call: (root) => ({ name: "write_file", arguments: { path: `${root}/write.txt`, content } })
  },
  { id: "info", title: "get_file_info", call: (root) => ({ name: "get_file_info", arguments: { path: `${root}/read.txt` } }) },
  { id: "list", title: "list_directory, 64 entries", call: (root) => ({ name: "list_directory", arguments: { path: `${root}/dir` } }) }
]

/** One round: `n` awaited calls; answers wall ms and the server's CPU ms. */
const round = async (server, request, n) => {
  const c0 = cpuMsOf(server.pid)
  const t0 = performance.now()
  for (let i = 0; i < n; i++) {
    const r = await server.client.callTool(request)
    if (r.isError) throw new Error(`${server.name}: ${request.name} failed: ${r.content[0]?.text}`)
  }
  return { ms: performance.now() - t0, cpuMs: cpuMsOf(server.pid) - c0 }
}

/** `fn` awaited `n` times after a warm-up; answers µs of wall and of this process's CPU per call. */
const inProcess = async (fn, n, warmup) => {
  for (let i = 0; i < warmup; i++) await fn(i)
  const c0 = process.cpuUsage()
  const t0 = performance.now()
  for (let i = 0; i < n; i++) await fn(i)
  const c = process.cpuUsage(c0)
  return { wallUs: ((performance.now() - t0) * 1000) / n, cpuUs: (c.user + c.system) / n }
}

/** The file work of one read and one write call, each server's own code, in this process. */
const fileWork = async (base, quick) => {
  const lib = await import(path.join(repo, "node_modules/@modelcontextprotocol/server-filesystem/dist/lib.js"))
  const { fromArguments } = await import(path.join(repo, "dist/mcp/allowed.js"))
  const { locate } = await import(path.join(repo, "dist/mcp/paths.js"))
  const { readBytes, writeText } = await import(path.join(repo, "dist/mcp/access.js"))
  const rows = []
  const n = quick ? 500 : 2000
  for (const [who, root] of [
    ["reference", path.join(base, "inproc-ref")],
    ["pinnedfs", path.join(base, "inproc-ours")]
  ]) {
    fs.mkdirSync(root)
    layout(root)
    let read
    let write
    let close = () => {}
    if (who === "reference") {
      lib.setAllowedDirectories([root])
      read = async () => lib.readFileContent(await lib.validatePath(`${root}/read.txt`))
      write = async () => lib.writeFileContent(await lib.validatePath(`${root}/write.txt`), content)
    } else {
      const allowed = await fromArguments([root], { strategy: "auto", warn: () => {} })
      read = async () => (await readBytes(locate(`${root}/read.txt`, allowed))).toString("utf8")
      write = async () => writeText(locate(`${root}/write.txt`, allowed), content, false)
      close = () => allowed.close()
    }
    rows.push({ what: "read 4 KiB", who, ...(await inProcess(read, n, n / 5)) })
    rows.push({ what: "write 4 KiB over a file", who, ...(await inProcess(write, n / 4, n / 20)) })
    close()
  }
  return rows
}

/**
 * Measures every scenario on every server; answers markdown lines, rows, failures.
 * @param {{ quick?: boolean, log?: (...a: unknown[]) => void }} options
 */
export const mcpBench = async ({ quick = false, log = () => {} } = {}) => {
  const failures = []
  if (!fs.existsSync(oursBin)) return { lines: [], rows: [], failures: ["mcp: dist/ is missing (npm run build:ts)"] }
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-bench-mcp-"))
  const self = fileURLToPath(import.meta.url)
  const floors = ["read", "write"]
  /** @type {Array<[string, (root: string) => Array<string>] | [string, (root: string) => Array<string>, Array<string>]>} */
  const contenders = [
    ["reference (@modelcontextprotocol/server-filesystem)", (root) => [referenceBin, root]],
    ["pinnedfs mcp (openat2)", (root) => [oursBin, "mcp", "--strategy", "openat2", root]],
    ["pinnedfs mcp (walk)", (root) => [oursBin, "mcp", "--strategy", "walk", root]],
    ["floor: the SDK alone, answers from memory", (root) => [self, "--serve-floor", "answer", root], floors],
    ["floor + one thread-pool trip", (root) => [self, "--serve-floor", "trip", root], floors]
  ]
  const servers = []
  /** @type {Array<any>} */
  const rows = []
  // Short rounds taken in turn, many of them: on a shared machine the load drifts over seconds, and
  // each ratio is taken round by round (the reference's round against the rounds just beside it).
  const calls = 100
  const rounds = quick ? 15 : 40
  const warmup = quick ? 2000 : 3000
  try {
    for (const [name, args, only] of contenders) {
      const root = path.join(base, `tree-${servers.length}`)
      fs.mkdirSync(root)
      layout(root)
      servers.push({ ...(await connect(name, args(root))), root, only })
    }
    const all = servers
    for (const s of scenarios) {
      // The reference first: every ratio is against it.
      const active = all.filter((x) => x.only === undefined || x.only.includes(s.id))
      const results = active.map(() => ({ ms: [], cpuMs: [] }))
      // Warm-up: both servers' JIT and caches settle before anything is counted.
      for (const server of active) await round(server, s.call(server.root), warmup)
      for (let r = 0; r < rounds; r++) {
        // The order rotates, so no server is always the one measured right after another.
        for (let k = 0; k < active.length; k++) {
          const i = (r + k) % active.length
          const one = await round(active[i], s.call(active[i].root), calls)
          results[i].ms.push(one.ms)
          results[i].cpuMs.push(one.cpuMs)
        }
      }
      const perSecond = results.map((x) => (calls * 1000) / median(x.ms))
      for (const [i, server] of active.entries()) {
        rows.push({
          scenario: s.id,
          title: s.title,
          server: server.name,
          callsPerSec: perSecond[i],
          // Paired: each round's reference time over this server's time in the same round.
          ratio: median(results[i].ms.map((ms, r) => results[0].ms[r] / ms)),
          serverCpuUsPerCall: (results[i].cpuMs.reduce((a, b) => a + b, 0) * 1000) / (calls * rounds),
          cpuRatio:
            results[0].cpuMs.reduce((a, b) => a + b, 0) /
            Math.max(
              results[i].cpuMs.reduce((a, b) => a + b, 0),
              1e-9
            )
        })
      }
      log(`mcp ${s.id}: ${perSecond.map((x) => x.toFixed(0)).join(" / ")} calls/s`)
    }
    for (const r of await fileWork(base, quick)) rows.push({ scenario: `in-process ${r.what}`, ...r })
  } catch (e) {
    failures.push(`mcp: ${e instanceof Error ? e.message : String(e)}`)
  } finally {
    for (const s of servers) await s.close().catch(() => {})
    fs.rmSync(base, { recursive: true, force: true })
  }
  const fmt = (x, d = 2) => x.toFixed(d)
  const stdio = rows.filter((r) => r.server !== undefined)
  const local = rows.filter((r) => r.server === undefined)
  const lines = [
    `MCP servers over stdio (the SDK's Client, one awaited call at a time; ${rounds} rounds of ${calls} calls per server, taken in turn; calls/s: median round; vs reference: median of the rounds' ratios; server CPU: all rounds, from /proc):`,
    "",
    "| scenario | server | calls/s | vs reference | server CPU µs/call | reference CPU / this CPU |",
    "|---|---|---:|---:|---:|---:|",
    ...stdio.map(
      (r) =>
        `| ${r.title} | ${r.server} | ${fmt(r.callsPerSec, 0)} | ${fmt(r.ratio)}× | ${fmt(r.serverCpuUsPerCall, 0)} | ${fmt(r.cpuRatio)}× |`
    ),
    "",
    "The file work of one call, without the protocol, in one process (each server's own code; µs per call):",
    "",
    "| call | server | wall µs | CPU µs |",
    "|---|---|---:|---:|",
    ...local.map((r) => `| ${r.what} | ${r.who} | ${fmt(r.wallUs, 0)} | ${fmt(r.cpuUs, 0)} |`)
  ]
  return { lines, rows, failures }
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === "--serve-floor") {
  await serveFloor(process.argv[3], process.argv[4])
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { lines, failures } = await mcpBench({ quick: process.argv.includes("--quick"), log: (...a) => console.error(...a) })
  console.log(
    `pinnedfs mcp benchmark, node ${process.version}, ${os.cpus().length} CPUs, load average ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}, ${new Date().toISOString()}\n`
  )
  console.log(lines.join("\n"))
  if (failures.length > 0) {
    console.log(`\nFAILED:\n${failures.map((f) => `- ${f}`).join("\n")}`)
    process.exitCode = 1
  }
}
