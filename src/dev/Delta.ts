/**
 * The advisory delta: what an in-place capability says it did. Only its diagnostics are taken.
 * Its claims about files are compared with the re-read by path membership (not by content) and
 * every disagreement is a `WARNING`, never a failed step: the disk changes the re-read found are
 * real whatever the engine reports, and applying the claims on top of the re-read would apply
 * each change twice.
 *
 * - **claimed-unchanged**: claimed a path the re-read found unchanged;
 * - **changed-unclaimed**: the re-read found a path changed that was not claimed;
 * - **claimed-unauthorized**: claimed a path outside what it was allowed to touch;
 * - **unparseable**: the delta is not the shape below (nothing of it is then used).
 *
 * A capability that returns `undefined` makes no claims and nothing is compared: an external tool
 * cannot say what it changed.
 *
 * @since 0.1.0
 */
import type { Diagnostic, Severity } from "./Diagnostic.ts"
import { escaped } from "./quote.ts"

/**
 * @since 0.1.0
 * @category models
 */
export interface Delta {
  readonly diagnostics?: ReadonlyArray<{ readonly severity: Severity; readonly path?: string; readonly message: string }>
  /** Paths the engine says it wrote, created or deleted; a rename names both ends (`path`, `to`). */
  readonly changes?: ReadonlyArray<{ readonly path: string; readonly to?: string }>
}

/**
 * @since 0.1.0
 * @category models
 */
export type ParsedDelta =
  | { readonly kind: "none" }
  | { readonly kind: "parsed"; readonly diagnostics: ReadonlyArray<Diagnostic>; readonly claims: ReadonlySet<string> | undefined }
  | { readonly kind: "unparseable"; readonly why: string }

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Checks a capability's return value against {@link Delta}.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (u: unknown, source: string): ParsedDelta => {
  if (u === undefined) return { kind: "none" }
  if (!isRecord(u))
    return { kind: "unparseable", why: `expected an object, got ${u === null ? "null" : Array.isArray(u) ? "an array" : typeof u}` }
  const diagnostics: Array<Diagnostic> = []
  if (u["diagnostics"] !== undefined) {
    if (!Array.isArray(u["diagnostics"])) return { kind: "unparseable", why: "'diagnostics' is not an array" }
    for (const [i, d] of u["diagnostics"].entries()) {
      if (
        !isRecord(d) ||
        (d["severity"] !== "ERROR" && d["severity"] !== "WARNING") ||
        typeof d["message"] !== "string" ||
        (d["path"] !== undefined && typeof d["path"] !== "string")
      ) {
        return { kind: "unparseable", why: `diagnostics[${i}] needs severity ERROR or WARNING, a message and an optional path` }
      }
      diagnostics.push({ severity: d["severity"], code: "engine", path: d["path"] as string | undefined, message: d["message"], source })
    }
  }
  let claims: Set<string> | undefined
  if (u["changes"] !== undefined) {
    if (!Array.isArray(u["changes"])) return { kind: "unparseable", why: "'changes' is not an array" }
    claims = new Set()
    for (const [i, c] of u["changes"].entries()) {
      if (!isRecord(c) || typeof c["path"] !== "string" || (c["to"] !== undefined && typeof c["to"] !== "string")) {
        return { kind: "unparseable", why: `changes[${i}] needs a string 'path' (and an optional string 'to')` }
      }
      claims.add(c["path"])
      if (typeof c["to"] === "string") claims.add(c["to"])
    }
  }
  return { kind: "parsed", diagnostics, claims }
}

/**
 * The warnings of a comparison between the delta and the re-read.
 *
 * @since 0.1.0
 * @category comparison
 */
export const compare = (
  delta: ParsedDelta,
  observed: ReadonlySet<string>,
  authorized: (path: string) => boolean,
  source: string
): Array<Diagnostic> => {
  if (delta.kind === "none") return []
  if (delta.kind === "unparseable") {
    return [
      {
        severity: "WARNING",
        code: "unparseable-delta",
        source,
        message: `${source} returned a delta that cannot be parsed (${delta.why}): ignored; the re-read stands`
      }
    ]
  }
  const claims = delta.claims
  if (claims === undefined) return []
  const out: Array<Diagnostic> = []
  for (const path of [...claims].sort()) {
    if (!authorized(path)) {
      out.push({
        severity: "WARNING",
        code: "claimed-unauthorized",
        path,
        source,
        message: `${source} claims to have changed '${escaped(path)}', which it was not allowed to touch`
      })
    } else if (!observed.has(path)) {
      out.push({
        severity: "WARNING",
        code: "claimed-unchanged",
        path,
        source,
        message: `${source} claims to have changed '${escaped(path)}', but the re-read found it unchanged`
      })
    }
  }
  for (const path of [...observed].sort()) {
    if (!claims.has(path)) {
      out.push({
        severity: "WARNING",
        code: "changed-unclaimed",
        path,
        source,
        message: `the re-read found '${escaped(path)}' changed, but ${source} did not claim it`
      })
    }
  }
  return out
}
