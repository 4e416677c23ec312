/**
 * Drives the moved-out attacker (test/race/mover.c): it waits with inotify for the operation under
 * test to touch a directory, then performs renames (the held directory or an ancestor out of the
 * root, something from outside into the departed tree). The operation is started only once the
 * watches are in place. The outcome says whether the renames really happened (a live attack), and
 * how many of the watched events the operation caused in the departed tree after the move, counted
 * in the kernel's own event order.
 */
import { spawn } from "node:child_process"
import { buildHelper } from "../../scripts/race/run.mjs"

export type MoverEvent = "open" | "access" | "create" | "delete" | "moved_to"

export interface MoverOutcome {
  /** Whether the watched event came (false: the operation never touched the directory in time). */
  readonly fired: boolean
  readonly renamed: number
  readonly failed: number
  /**
   * The operation's acts on the watched directory (the `on` event and the `acts` ones) that the
   * kernel queued after the first rename: 0 means its last act there came before the move.
   */
  readonly after: number
  /**
   * When the first rename (the move out) began and when it returned, on CLOCK_MONOTONIC in
   * nanoseconds: the clock `process.hrtime.bigint()` reads, so it compares with when the operation
   * settled. 0 when the event never came.
   */
  readonly renameStarted: bigint
  readonly renameEnded: bigint
}

export interface Mover {
  /** Resolves once the inotify watches are in place. */
  readonly ready: Promise<void>
  /** Call once the operation has returned: every event it caused is queued by then. */
  readonly finish: () => Promise<MoverOutcome>
}

let bin: string | undefined

export const startMover = (options: {
  /** The directory whose events count; with `deep`, it and every directory below it. */
  readonly watch: string
  readonly deep?: boolean
  readonly on: MoverEvent
  /** Further events that are the operation's acts, counted after the move with `on`'s. */
  readonly acts?: ReadonlyArray<MoverEvent>
  readonly count?: number
  readonly timeoutMs?: number
  readonly renames: ReadonlyArray<readonly [string, string]>
}): Mover => {
  bin ??= buildHelper("test/race/mover.c", "mover")
  const args = [
    options.deep === true ? `${options.watch}/...` : options.watch,
    [options.on, ...(options.acts ?? [])].join("+"),
    String(options.count ?? 1),
    String(options.timeoutMs ?? 10_000),
    ...options.renames.flat()
  ]
  const child = spawn(bin, args, { stdio: ["pipe", "pipe", "inherit"] })
  let out = ""
  let onReady: () => void = () => {}
  const ready = new Promise<void>((resolve) => {
    onReady = resolve
  })
  child.stdout.setEncoding("utf8")
  child.stdout.on("data", (chunk: string) => {
    out += chunk
    if (out.startsWith("R\n")) onReady()
  })
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once("error", reject)
    // "close", not "exit": the pipes are closed too, so a test's descriptor count is not disturbed.
    child.once("close", (code) => {
      onReady()
      resolve(code)
    })
  })
  const finish = async (): Promise<MoverOutcome> => {
    child.stdin.end()
    const code = await exited
    const lines = out.split("\n")
    if (lines.includes("T")) return { fired: false, renamed: 0, failed: 0, after: 0, renameStarted: 0n, renameEnded: 0n }
    const done = lines.find((l) => l.startsWith("D "))
    const tail = lines.find((l) => l.startsWith("A "))
    if (!done || !tail || code !== 0) throw new Error(`mover exited ${code}: ${JSON.stringify(out)}`)
    const [, renamed, failed, started, ended] = done.split(" ")
    return {
      fired: true,
      renamed: Number(renamed),
      failed: Number(failed),
      after: Number(tail.split(" ")[1]),
      renameStarted: BigInt(started ?? "0"),
      renameEnded: BigInt(ended ?? "0")
    }
  }
  return { ready, finish }
}
