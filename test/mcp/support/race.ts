/**
 * The race cells for the MCP servers, in the race suite's arena (scripts/race/arena.mjs): the
 * native attacker exchanges root/d with a link to the outside canary tree (symlink), root/d with a
 * directory moved in from outside whose sub/deep links into the canary (dirswap), or root/file.txt
 * with a hard link to a canary file (hardlink), while one server answers tool calls through the
 * contested path. The arena's root is the server's allowed directory.
 *
 * An escape: an answer that carries the canary (its token, a canary-only name, a base64 block that
 * decodes to either, a canary file's mode in get_file_info), or a canary tree changed after a call.
 * An answer that is not an escape is right (the inside answer) or a refusal; anything else is
 * counted as unexpected.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { type Arena, leaks } from "../../../scripts/race/run.mjs"
import type { Server } from "./servers.ts"

export type Attack = "symlink" | "dirswap" | "hardlink"

export interface Cell {
  readonly tool: string
  readonly attacks: ReadonlyArray<Attack>
  /** The arguments, from the arena's root. */
  readonly args: (root: string) => Record<string, unknown>
  /** Changes the tree: rebuilt (attacker parked) before each call, canary checked after it. */
  readonly mutates?: boolean
  /** The inside answer's text, when a success has one to compare with. */
  readonly right?: (root: string) => string | RegExp
}

const inner = (root: string) => `${root}/d/sub/deep/inner.txt`
const contested = (root: string, attack: Attack) => (attack === "hardlink" ? `${root}/file.txt` : inner(root))
const insideText = (attack: Attack) => (attack === "hardlink" ? "inside file\n" : "inside inner\n")

/** Every tool that takes a path, against the attacks it can be fooled by; hardlink only where the reference can leak. */
export const cells = (attack: Attack): ReadonlyArray<Cell> =>
  (
    [
      {
        tool: "read_text_file",
        attacks: ["symlink", "dirswap", "hardlink"],
        args: (r) => ({ path: contested(r, attack) }),
        right: () => insideText(attack)
      },
      {
        tool: "read_file",
        attacks: ["symlink", "hardlink"],
        args: (r) => ({ path: contested(r, attack) }),
        right: () => insideText(attack)
      },
      { tool: "read_media_file", attacks: ["symlink", "hardlink"], args: (r) => ({ path: contested(r, attack) }) },
      {
        tool: "read_multiple_files",
        attacks: ["symlink", "hardlink"],
        args: (r) => ({ paths: [contested(r, attack)] }),
        right: (r) => `${contested(r, attack)}:\n${insideText(attack)}\n`
      },
      {
        tool: "get_file_info",
        attacks: ["symlink", "hardlink"],
        args: (r) => ({ path: contested(r, attack) }),
        right: () => /permissions: 644$/
      },
      {
        tool: "edit_file",
        attacks: ["symlink", "hardlink"],
        mutates: true,
        // Matches the inside file and the canary's alike, so the reference's diff shows whichever it read.
        args: (r) => ({ path: contested(r, attack), edits: [{ oldText: "\n", newText: "!\n" }] })
      },
      { tool: "write_file", attacks: ["symlink", "dirswap"], mutates: true, args: (r) => ({ path: inner(r), content: "written\n" }) },
      { tool: "create_directory", attacks: ["symlink", "dirswap"], mutates: true, args: (r) => ({ path: `${r}/d/sub/deep/made` }) },
      {
        tool: "move_file",
        attacks: ["symlink"],
        mutates: true,
        args: (r) => ({ source: inner(r), destination: `${r}/d/sub/deep/moved.txt` })
      },
      {
        tool: "list_directory",
        attacks: ["symlink", "dirswap"],
        args: (r) => ({ path: `${r}/d/sub/deep` }),
        right: () => "[FILE] inner.txt\n[DIR] nest\n[DIR] vacant"
      },
      { tool: "list_directory_with_sizes", attacks: ["symlink"], args: (r) => ({ path: `${r}/d/sub/deep` }) },
      { tool: "directory_tree", attacks: ["symlink"], args: (r) => ({ path: `${r}/d/sub/deep` }) },
      { tool: "search_files", attacks: ["symlink"], args: (r) => ({ path: `${r}/d/sub/deep`, pattern: "**/*.txt" }) }
    ] satisfies ReadonlyArray<Cell>
  ).filter((c) => (c.attacks as ReadonlyArray<Attack>).includes(attack))

/** Whether an answer carries anything of the canary. */
export const leaked = (arena: Arena, r: CallToolResult): boolean => {
  if (leaks(arena, r.content)) return true
  for (const block of r.content) {
    const data =
      block.type === "image" || block.type === "audio"
        ? block.data
        : block.type === "resource" && "blob" in block.resource
          ? block.resource.blob
          : undefined
    if (data !== undefined && leaks(arena, Buffer.from(data, "base64").toString("latin1"))) return true
  }
  const text = r.content[0]?.type === "text" ? r.content[0].text : ""
  // The canary's files are 0640 and its directories 0750; the inside's are 0644 and 0755.
  return /permissions: (640|750)$/m.test(text)
}

/** The refusals and errors an attack explains in a pinnedfs answer. */
const explained =
  /^(Access denied - (symbolic link not followed|file with more than one name|path outside allowed directories|directory changed while in use): |ENOTDIR: |ENOENT: no such file or directory|EBUSY: resource busy or locked, open '[^']*' \(pinnedfs: the file changed while it was being edited)/

export interface Phase {
  tried: number
  swaps: number
  escapes: number
  refused: number
  unexpected: number
  examples: Array<string>
  outcomes: Record<string, number>
}

const note = (list: Array<string>, what: string) => {
  if (list.length < 3) list.push(what.slice(0, 300))
}

/**
 * Calls `cell` on `server` under the running attacker, at most `iterations` times and `seconds`
 * long: a pinnedfs phase that has met no refusal goes on, up to ten times the calls, within the
 * time (the attack must have been live); the reference's goes on until its first escape, where
 * the race window is narrow (a listing taken between two checks of the path). The swaps counted are the attacker's own, made while this
 * phase ran.
 */
export const phase = async (options: {
  readonly arena: Arena
  readonly attacker: { park: () => Promise<{ swaps: number }>; resume: () => void }
  readonly server: Server
  readonly cell: Cell
  readonly iterations: number
  readonly seconds: number
  /** pinnedfs: go on past `iterations` (up to ten times) until the attack has caused a refusal. */
  readonly untilRefused: boolean
  /** The reference: go on past `iterations` (up to `extra` calls) until its first escape. */
  readonly untilEscape?: number | undefined
}): Promise<Phase> => {
  const { arena, attacker, server, cell } = options
  const p: Phase = { tried: 0, swaps: 0, escapes: 0, refused: 0, unexpected: 0, examples: [], outcomes: {} }
  const rebuild = async () => {
    const parked = await attacker.park()
    arena.restore()
    return parked
  }
  const before = await rebuild()
  const args = cell.args(arena.root)
  const right = cell.right?.(arena.root)
  attacker.resume()
  const deadline = Date.now() + options.seconds * 1000
  const more = (i: number) =>
    i < options.iterations ||
    (options.untilRefused && p.refused === 0 && i < options.iterations * 10) ||
    (options.untilEscape !== undefined && p.escapes === 0 && i < options.iterations + options.untilEscape)
  for (let i = 0; more(i) && Date.now() < deadline; i++) {
    if (cell.mutates && i > 0) {
      await rebuild()
      attacker.resume()
    }
    const r = await server.call(cell.tool, args)
    p.tried++
    const said = r.content[0]?.type === "text" ? r.content[0].text : ""
    // read_multiple_files answers a member's failure inside a successful result.
    const embedded = cell.tool === "read_multiple_files" ? /^[^\n]*: Error - (.*)$/s.exec(said)?.[1] : undefined
    const failed = r.isError === true || embedded !== undefined
    const text = embedded ?? said
    let outcome: string
    if (leaked(arena, r)) {
      p.escapes++
      outcome = "leaked"
      note(p.examples, `leaked: ${text || JSON.stringify(r.content)}`)
    } else if (failed) {
      outcome = explained.test(text) ? text.replace(/:.*$/s, "") : "error"
      if (explained.test(text)) p.refused++
      else {
        p.unexpected++
        note(p.examples, `unexplained: ${text}`)
      }
    } else {
      outcome = "ok"
      const wrong = right !== undefined && !(typeof right === "string" ? text === right : right.test(text))
      if (wrong) {
        p.unexpected++
        note(p.examples, `wrong answer: ${text}`)
      }
    }
    if (cell.mutates && arena.canaryChanged()) {
      p.escapes++
      outcome = "canary changed"
      note(p.examples, `changed the canary (answer: ${text})`)
      await attacker.park()
      arena.resetCanary()
      attacker.resume()
    }
    p.outcomes[outcome] = (p.outcomes[outcome] ?? 0) + 1
  }
  const after = await attacker.park()
  p.swaps = after.swaps - before.swaps
  if (arena.canaryChanged()) {
    p.escapes++
    note(p.examples, "the canary tree changed by the end of the phase")
    arena.resetCanary()
  }
  return p
}
