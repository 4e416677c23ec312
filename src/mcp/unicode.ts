/**
 * The reference server's one lookup by meaning rather than by bytes: a path that does not exist as
 * spelled is matched, component by component, against names that are the same text in Unicode
 * normalization form C (a name stored decomposed, as macOS and some archives store it, is found
 * when it is asked for composed, and the other way round). Done here by listing each directory
 * beneath the pinned root, never by following anything.
 *
 * Only a path with a character outside ASCII is looked up this way: an ASCII path costs no extra
 * trip. The reference would also map an ASCII name to a stored name that only normalizes to it
 * (`K` to the Kelvin sign, U+212A); docs/mcp.md lists that difference.
 *
 * @since 0.1.0
 */
import { exists, names } from "./access.ts"
import { ToolFailure } from "./failures.ts"
import type { Target } from "./paths.ts"

const beyondAscii = /[\u0080-\uffff]/

const child = (t: Target, rel: string): Target => {
  const real = t.root.path
  return { ...t, rel, abs: rel === "" ? real : real === "/" ? `/${rel}` : `${real}/${rel}` }
}

/** Whether `t` may need {@link storedSpelling}'s lookup: a path with a character outside ASCII. @since 0.1.0 */
export const mayNeedLookup = (t: Target): boolean => t.rel !== "" && beyondAscii.test(t.rel)

/**
 * `t` itself when it exists or is ASCII; else the same path with each missing component replaced by
 * the one stored name that is NFC-equal to it, as far as such names exist. Two such names in one
 * directory are ambiguous and refused, with the reference's text.
 *
 * @since 0.1.0
 */
export const storedSpelling = async (t: Target): Promise<Target> => {
  if (!mayNeedLookup(t)) return t
  if (await exists(t).catch(() => true)) return t
  const parts = t.rel.split("/")
  const done: Array<string> = []
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    const here = await names(child(t, done.join("/"))).catch(() => undefined)
    if (here === undefined) return t
    if (here.includes(part)) {
      done.push(part)
      continue
    }
    const wanted = part.normalize("NFC")
    const same = here.filter((name) => name.normalize("NFC") === wanted)
    if (same.length > 1) throw new ToolFailure(`Ambiguous Unicode path component: ${part}`)
    if (same.length === 0) return child(t, [...done, ...parts.slice(i)].join("/"))
    done.push(same[0]!)
  }
  return child(t, done.join("/"))
}
