/**
 * Paths as bytes. A name on disk is bytes, not text: it may hold a newline, or bytes that are not
 * UTF-8. Discovery reports names exactly, and the sandbox must mount exactly the name it checked,
 * so a confinement plan keeps every path as a *raw path*: a JavaScript string holding one
 * character per byte (Latin-1), which compares, sorts and slices like the bytes it stands for.
 * Text a person reads is derived from it, lossily, and never used to name a file.
 *
 * @since 0.1.0
 */

/**
 * One character per byte of the path (each in U+0000–U+00FF).
 *
 * @since 0.1.0
 * @category models
 */
export type RawPath = string

/** The raw form of a path given as text (encoded as UTF-8). @since 0.1.0 */
export const rawOf = (text: string): RawPath => Buffer.from(text, "utf8").toString("latin1")

/** The bytes a raw path stands for. @since 0.1.0 */
export const bytesOf = (raw: RawPath): Buffer => Buffer.from(raw, "latin1")

/** The raw form of bytes. @since 0.1.0 */
export const rawOfBytes = (bytes: Uint8Array): RawPath => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1")

const strict = new TextDecoder("utf-8", { fatal: true })

/**
 * The path as text for people: UTF-8 where it is UTF-8, each other byte written `\xNN`. Two
 * different raw paths can never show the same (a literal backslash is shown doubled).
 *
 * @since 0.1.0
 */
export const shown = (raw: RawPath): string => {
  const bytes = bytesOf(raw)
  try {
    return strict.decode(bytes).replaceAll("\\", "\\\\")
  } catch {
    let out = ""
    let i = 0
    while (i < bytes.length) {
      // Longest valid UTF-8 sequence at i, else one escaped byte.
      let taken = false
      for (let n = 4; n >= 1 && !taken; n--) {
        if (i + n > bytes.length) continue
        try {
          out += strict.decode(bytes.subarray(i, i + n)).replaceAll("\\", "\\\\")
          i += n
          taken = true
        } catch {
          // try shorter
        }
      }
      if (!taken) {
        out += `\\x${bytes[i]!.toString(16).padStart(2, "0")}`
        i += 1
      }
    }
    return out
  }
}

/** The text a raw path stands for, when it is valid UTF-8. @since 0.1.0 */
export const textOf = (raw: RawPath): string | undefined => {
  try {
    return strict.decode(bytesOf(raw))
  } catch {
    return undefined
  }
}

/** `child` is `parent` or lies beneath it (both absolute raw paths without a trailing `/`). @internal */
export const within = (child: RawPath, parent: RawPath): boolean =>
  child === parent || (parent === "/" ? child.startsWith("/") : child.startsWith(`${parent}/`))

/** `child` lies strictly beneath `parent`. @internal */
export const beneath = (child: RawPath, parent: RawPath): boolean => child !== parent && within(child, parent)

/** `path` relative to `anchor` (`""` for the anchor itself); `path` must be within it. @internal */
export const relativeTo = (path: RawPath, anchor: RawPath): RawPath =>
  path === anchor ? "" : path.slice(anchor === "/" ? 1 : anchor.length + 1)

/** `anchor` joined with a relative raw path. @internal */
export const joinRaw = (anchor: RawPath, relative: RawPath): RawPath =>
  relative === "" ? anchor : anchor === "/" ? `/${relative}` : `${anchor}/${relative}`

/** Number of components (`/` is 0). @internal */
export const depthOf = (path: RawPath): number => (path === "/" ? 0 : path.split("/").length - 1)

/** Characters a terminal acts on, or that break or reorder a line: C0, DEL, C1, U+2028/9, bidi. */
const unprintable = /[\p{Cc}\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu

/**
 * Text made safe to print on a terminal, one line: every control character, line or paragraph
 * separator and bidirectional override written `\xNN` (below U+0080) or `\u{NNNN}`. A path named
 * with an escape sequence would otherwise retitle or repaint the user's terminal, and one with a
 * newline would print a line of its own (a forged "removed …" line). Meant for text `shown`
 * produced, where a literal backslash is already doubled, so the escapes stay unambiguous.
 *
 * @since 0.2.0
 */
export const printable = (text: string): string =>
  text.replace(unprintable, (c) => {
    const n = c.codePointAt(0)!
    return n < 0x80 ? `\\x${n.toString(16).padStart(2, "0")}` : `\\u{${n.toString(16)}}`
  })
