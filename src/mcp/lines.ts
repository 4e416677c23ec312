/**
 * `head` and `tail` as the reference answers them, as functions of the whole text: the reference
 * reads in 1 KiB chunks and stops early, and these give what that reading gives (the chunking
 * changes nothing a caller can see). Its quirks are kept: `tail` turns CRLF into LF and `head` does
 * not; a file ending in a newline has an empty last line for `tail` and none for `head`; a
 * fractional count rounds up for `head` and down for `tail`; a negative count answers nothing.
 * (Zero never gets here: the reference, testing the count for truth, reads the whole file.)
 *
 * @since 0.1.0
 */

/** CRLF to LF, as the reference normalizes before diffs and tails. @since 0.1.0 */
export const normalizeLineEndings = (text: string): string => text.replace(/\r\n/g, "\n")

/** The first `n` lines. @since 0.1.0 */
export const head = (text: string, n: number): string => {
  if (n < 0) return ""
  const lines = text.split("\n")
  // The text after the last newline counts as a line only when it is not empty.
  if (lines[lines.length - 1] === "") lines.pop()
  return lines.slice(0, Math.ceil(n)).join("\n")
}

/**
 * The last `n` lines of `bytes`. Worked on the bytes the reference's backward reading would have
 * read (1 KiB chunks from the end until `n` newlines are in hand), so that even a count between 0
 * and 1, which keeps every line of what was read, answers the same.
 *
 * @since 0.1.0
 */
export const tail = (bytes: Uint8Array, n: number): string => {
  if (bytes.length === 0) return ""
  let position = bytes.length
  let newlines = 0
  while (position > 0 && newlines < n) {
    const size = Math.min(1024, position)
    position -= size
    for (let i = position; i < position + size; i++) if (bytes[i] === 0x0a) newlines++
  }
  const text = normalizeLineEndings(Buffer.from(bytes.buffer, bytes.byteOffset + position, bytes.length - position).toString("utf8"))
  return text.split("\n").slice(-n).join("\n")
}
