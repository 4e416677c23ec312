/**
 * Bytes to text, the one place both APIs decode a file: `TextDecoder`, as Effect's `readFileString`
 * does, with V8's string ceiling turned into a typed refusal. A file of more than about 512 MiB of
 * text (`buffer.constants.MAX_STRING_LENGTH` UTF-16 units) cannot become one JavaScript string;
 * `TextDecoder` then throws Node's `ERR_STRING_TOO_LONG`, which is neither a `PinnedFsError` nor a
 * `PlatformError`.
 *
 * @internal
 */
import { constants } from "node:buffer"
import type { TextDecoder } from "node:util"
import { tooLarge } from "./errors.ts"

const isStringTooLong = (u: unknown): boolean =>
  typeof u === "object" && u !== null && (u as { code?: unknown }).code === "ERR_STRING_TOO_LONG"

/** Decodes `bytes`; text longer than a JavaScript string can hold is `toolarge` (`BadArgument`). */
export const decodeText = (decoder: TextDecoder, bytes: Uint8Array, path: string): string => {
  try {
    return decoder.decode(bytes)
  } catch (u) {
    if (!isStringTooLong(u)) throw u
    throw tooLarge(
      `${bytes.byteLength} bytes decode to more than the ${constants.MAX_STRING_LENGTH} characters a JavaScript string can hold`,
      path,
      "decode"
    )
  }
}
