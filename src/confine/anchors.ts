/**
 * Anchors: the directories a preparation pins, by their canonical spelling, captured once at the
 * start of each preparation. Every path a plan names is an anchor plus a relative path walked from
 * the anchor's handle with no link followed, so the anchor spellings are the only place a link is
 * ever resolved (an immutable link in a home directory's ancestry keeps working), and a link
 * substituted later beneath an anchor is met, never followed.
 *
 * @internal
 */
import * as fs from "node:fs"
import { PinnedRoot, type Strategy } from "../PinnedRoot.ts"
import { ConfinementError } from "./errors.ts"
import { type RawPath, rawOfBytes, shown, textOf } from "./raw.ts"

/** The canonical spelling of an existing directory, or null when it does not exist. */
export const canonicalDirectory = async (text: string): Promise<RawPath | null> => {
  try {
    const real = rawOfBytes(await fs.promises.realpath(text, { encoding: "buffer" }))
    const st = await fs.promises.stat(real === "" ? "/" : Buffer.from(real, "latin1"))
    if (!st.isDirectory()) throw new ConfinementError("invalid-target", `'${text}' is not a directory`)
    return real
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null
    throw e
  }
}

/**
 * The deepest existing directory on the way to `text` (canonical), and the components below it
 * that do not exist yet, as spelled.
 */
export const nearestExisting = async (
  text: string,
  canonical: (text: string) => Promise<RawPath | null> = canonicalDirectory
): Promise<{ readonly anchor: RawPath; readonly missing: ReadonlyArray<string> }> => {
  const parts = text.split("/").filter((p) => p !== "")
  for (let n = parts.length; n >= 0; n--) {
    const prefix = `/${parts.slice(0, n).join("/")}`
    const anchor = await canonical(prefix)
    if (anchor !== null) return { anchor, missing: parts.slice(n) }
  }
  throw new ConfinementError("invalid-target", `no part of '${text}' exists`)
}

/**
 * {@link canonicalDirectory} asked once per spelling: within one preparation the execution
 * target's paths share ancestors (five state roots beneath one parent), and each answer is a trip
 * to the thread pool.
 */
export const canonicalOnce = (): ((text: string) => Promise<RawPath | null>) => {
  const asked = new Map<string, Promise<RawPath | null>>()
  return (text) => {
    let p = asked.get(text)
    if (p === undefined) {
      p = canonicalDirectory(text)
      // Awaited by whoever asked; a rejection nobody awaits yet is not unhandled.
      p.catch(() => undefined)
      asked.set(text, p)
    }
    return p
  }
}

export class Anchors {
  private readonly pinned = new Map<RawPath, Promise<PinnedRoot>>()
  private readonly strategy: Strategy

  constructor(strategy: Strategy) {
    this.strategy = strategy
  }

  /** Pins `anchor` once per preparation. */
  pin(anchor: RawPath): Promise<PinnedRoot> {
    let p = this.pinned.get(anchor)
    if (!p) {
      const text = textOf(anchor)
      p =
        text === undefined
          ? Promise.reject(
              new ConfinementError("unnameable", `the directory '${shown(anchor)}' is not named in UTF-8 and cannot be pinned`)
            )
          : PinnedRoot.open(text, { strategy: this.strategy })
      p.catch(() => undefined)
      this.pinned.set(anchor, p)
    }
    return p
  }

  async close(): Promise<void> {
    const all = [...this.pinned.values()]
    this.pinned.clear()
    for (const p of all) {
      const root = await p.catch(() => undefined)
      root?.close()
    }
  }
}
