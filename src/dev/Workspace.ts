/**
 * The in-memory workspace a plan works on: workspace path → text, and what memory knows that disk
 * does not.
 *
 * - **Dirty**: a path whose text differs from the text last known to be on disk (edited in
 *   memory, not yet written). Computed, never flagged: an edit that leaves the text as it was
 *   leaves nothing dirty, and a re-read that takes the disk's text makes the path clean.
 * - **Unreadable**: a path present on disk that could not be admitted as text (read error,
 *   binary, too large, a link, not a file). It has no text: stale text is never kept.
 * - **Unnamed**: entries of a listed scope whose names are not valid UTF-8, by their printed
 *   (C-quoted) names. No string can name them, so no fixer can be given one and the workspace
 *   cannot hold it; they are kept here to be reported, never silently dropped. A later listing of
 *   the same scope that no longer finds one clears it.
 * - **Pending deletions**: paths removed in memory, to be removed from disk by the next `write`.
 * - **Diagnostics**: the current ones. An `unreadable` diagnostic lasts as long as the path is
 *   unreadable: a later good read (or an edit giving it text) clears both.
 *
 * Only the plan's own steps change a workspace: edits through {@link Editor}, reconciliation
 * through the re-read, flushes through `write`.
 *
 * @since 0.1.0
 */
import type { Diagnostic } from "./Diagnostic.ts"
import { workspacePath } from "./paths.ts"

/**
 * In-memory edits, as an `edit` step sees the workspace. Paths are workspace-relative.
 *
 * @since 0.1.0
 * @category models
 */
export interface Editor {
  readonly read: (path: string) => string | undefined
  readonly write: (path: string, text: string) => void
  readonly delete: (path: string) => void
  readonly paths: () => ReadonlyArray<string>
}

/**
 * @since 0.1.0
 * @category models
 */
export class Workspace {
  readonly #text = new Map<string, string>()
  /** The text last known to be on disk, per path; absent for a file only memory has. */
  readonly #disk = new Map<string, string>()
  readonly #unreadable = new Map<string, string>()
  readonly #pendingDeletions = new Set<string>()
  /** Printed name → reason, and the listing (its patterns) that found it. */
  readonly #unnamed = new Map<string, { readonly reason: string; readonly listing: string }>()
  #diagnostics: Array<Diagnostic> = []

  /** Tracked paths with text, sorted. */
  paths(): Array<string> {
    return [...this.#text.keys()].sort()
  }

  has(path: string): boolean {
    return this.#text.has(path)
  }

  get(path: string): string | undefined {
    return this.#text.get(path)
  }

  isDirty(path: string): boolean {
    return this.#text.has(path) && this.#text.get(path) !== this.#disk.get(path)
  }

  dirtyPaths(): Array<string> {
    return this.paths().filter((p) => this.isDirty(p))
  }

  /** Unreadable paths with the reason each could not be admitted. */
  get unreadable(): ReadonlyMap<string, string> {
    return this.#unreadable
  }

  /** Entries whose names are not valid UTF-8, by printed name, with the reason each was skipped. */
  get unnamed(): ReadonlyMap<string, string> {
    return new Map([...this.#unnamed].map(([name, u]) => [name, u.reason]))
  }

  get pendingDeletions(): ReadonlySet<string> {
    return this.#pendingDeletions
  }

  get diagnostics(): ReadonlyArray<Diagnostic> {
    return this.#diagnostics
  }

  /** Whether the path is known to the workspace at all: with text, or unreadable. */
  tracks(path: string): boolean {
    return this.#text.has(path) || this.#unreadable.has(path)
  }

  /** The editor an `edit` step is given. */
  editor(): Editor {
    return {
      read: (path) => this.#text.get(workspacePath(path)),
      write: (path, text) => {
        if (typeof text !== "string") throw new TypeError("edit text must be a string")
        const p = workspacePath(path)
        this.#text.set(p, text)
        this.#pendingDeletions.delete(p)
        this.#clearUnreadable(p)
      },
      delete: (path) => {
        const p = workspacePath(path)
        this.#text.delete(p)
        this.#clearUnreadable(p)
        if (this.#disk.has(p)) this.#pendingDeletions.add(p)
      },
      paths: () => this.paths()
    }
  }

  /** @internal The disk holds `text` at `path`: take it, clean. */
  admit(path: string, text: string): void {
    this.#text.set(path, text)
    this.#disk.set(path, text)
    this.#pendingDeletions.delete(path)
    this.#clearUnreadable(path)
  }

  /** @internal The path is gone from disk: forget it (there is nothing left to delete). */
  drop(path: string): void {
    this.#text.delete(path)
    this.#disk.delete(path)
    this.#pendingDeletions.delete(path)
    this.#clearUnreadable(path)
  }

  /** @internal The path is on disk but is not text we can hold: no text, one current diagnostic. */
  markUnreadable(path: string, reason: string, diagnostic: Diagnostic): void {
    this.#text.delete(path)
    this.#disk.delete(path)
    this.#unreadable.set(path, reason)
    this.#diagnostics = this.#diagnostics.filter((d) => !(d.code === "unreadable" && d.path === path))
    this.#diagnostics.push(diagnostic)
  }

  /**
   * @internal What `listing` (a scope's patterns) found now of the unnamed entries: those it found
   * before and not now are cleared with their diagnostics; answers the ones that are new.
   */
  markUnnamed(
    listing: string,
    found: ReadonlyMap<string, string>,
    diagnostic: (name: string, reason: string) => Diagnostic
  ): Array<{ readonly name: string; readonly reason: string; readonly diagnostic: Diagnostic }> {
    for (const [name, u] of this.#unnamed) {
      if (u.listing !== listing || found.has(name)) continue
      this.#unnamed.delete(name)
      this.#diagnostics = this.#diagnostics.filter((d) => !(d.code === "unnamed" && d.message === diagnostic(name, u.reason).message))
    }
    const added: Array<{ readonly name: string; readonly reason: string; readonly diagnostic: Diagnostic }> = []
    for (const [name, reason] of found) {
      if (this.#unnamed.has(name)) continue
      this.#unnamed.set(name, { reason, listing })
      const d = diagnostic(name, reason)
      this.#diagnostics.push(d)
      added.push({ name, reason, diagnostic: d })
    }
    return added
  }

  /** @internal The path's text was written to disk. */
  flushed(path: string): void {
    const text = this.#text.get(path)
    if (text !== undefined) this.#disk.set(path, text)
  }

  /** @internal The pending deletion of the path was carried out. */
  deleted(path: string): void {
    this.#disk.delete(path)
    this.#pendingDeletions.delete(path)
  }

  /** @internal */
  report(diagnostic: Diagnostic): void {
    this.#diagnostics.push(diagnostic)
  }

  #clearUnreadable(path: string): void {
    if (!this.#unreadable.delete(path)) return
    this.#diagnostics = this.#diagnostics.filter((d) => !(d.code === "unreadable" && d.path === path))
  }
}
