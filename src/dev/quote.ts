/**
 * Names and text made safe to print. A file name is bytes someone else chose: an ESC sequence in
 * it would reach the terminal, a newline would forge a line of the report, a comma would split a
 * comma-separated list in the wrong place. Control characters (C0, DEL, C1), Unicode format
 * characters (bidirectional overrides, zero-width characters), line and paragraph separators, lone
 * surrogates and spaces other than U+0020 are written as C escapes (`\n`, `\033`, and the UTF-8
 * bytes in octal for the rest, as GNU `ls --quoting-style=c` does).
 *
 * @since 0.1.0
 */

const named: Record<string, string> = {
  "\x07": "\\a",
  "\b": "\\b",
  "\t": "\\t",
  "\n": "\\n",
  "\v": "\\v",
  "\f": "\\f",
  "\r": "\\r",
  "\x1b": "\\033"
}

const unsafeAll = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]|(?! )\p{Zs}/gu
const unsafe = new RegExp(unsafeAll.source, "u")

const octal = (ch: string): string => {
  const known = named[ch]
  if (known !== undefined) return known
  // A lone surrogate has no UTF-8 form: its code unit, as \u escapes do.
  const cp = ch.codePointAt(0)!
  if (cp >= 0xd800 && cp <= 0xdfff) return `\\u${cp.toString(16).padStart(4, "0")}`
  return [...Buffer.from(ch, "utf8")].map((b) => `\\${b.toString(8).padStart(3, "0")}`).join("")
}

/**
 * `text` with every unsafe character escaped, except those in `keep` (tool output keeps its `\n`
 * and `\t`). Backslashes are left as they are: this is for prose, where only what would act on the
 * terminal matters.
 *
 * @since 0.1.0
 * @category quoting
 */
export const escaped = (text: string, keep = ""): string => text.replace(unsafeAll, (ch) => (keep.includes(ch) ? ch : octal(ch)))

/**
 * A file name as a report prints it: bare when every character is plain and it holds no space,
 * comma, quote or backslash; otherwise in double quotes with C escapes (`"a\nb.ts"`), so that a
 * list of names separated by `, ` can always be split back.
 *
 * @since 0.1.0
 * @category quoting
 */
export const quoted = (name: string): string => {
  if (name !== "" && !unsafe.test(name) && !/[ ,"\\']/.test(name)) return name
  return `"${name.replace(/[\\"]/g, (c) => `\\${c}`).replace(unsafeAll, octal)}"`
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true })

/** How many bytes the UTF-8 sequence led by `b` takes; 0 for a byte no sequence starts with. */
const sequenceLength = (b: number): number =>
  b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0

/**
 * A name given as bytes that are not all valid UTF-8 (one no string can hold), as a report prints
 * it: always in double quotes, its valid characters as {@link quoted} writes them, each byte of an
 * invalid sequence in octal (`"src/\377\376.ts"`), as GNU `ls --quoting-style=c` does.
 *
 * @since 0.1.0
 * @category quoting
 */
export const quotedBytes = (bytes: Uint8Array): string => {
  let out = ""
  let i = 0
  while (i < bytes.length) {
    const n = sequenceLength(bytes[i]!)
    let ch: string | undefined
    if (n > 0 && i + n <= bytes.length) {
      try {
        ch = strictUtf8.decode(bytes.subarray(i, i + n))
      } catch {
        ch = undefined
      }
    }
    if (ch === undefined) {
      out += `\\${bytes[i]!.toString(8).padStart(3, "0")}`
      i += 1
    } else {
      out += ch.replace(/[\\"]/g, (c) => `\\${c}`).replace(unsafeAll, octal)
      i += n
    }
  }
  return `"${out}"`
}
