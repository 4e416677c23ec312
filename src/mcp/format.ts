/**
 * Sizes and results as the reference prints them.
 *
 * @since 0.1.0
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"

/** `0 B`, `512 B`, `1.50 KB`, ... `TB`, two decimals past bytes. @since 0.1.0 */
export const formatSize = (bytes: number): string => {
  const units = ["B", "KB", "MB", "GB", "TB"]
  if (bytes <= 0) return "0 B"
  const i = Math.floor(Math.log(bytes) / Math.log(1024))
  if (i <= 0) return `${bytes} ${units[0]}`
  const unit = Math.min(i, units.length - 1)
  return `${(bytes / 1024 ** unit).toFixed(2)} ${units[unit]}`
}

/** A text answer: one text block, and the same text as `structuredContent.content`. @since 0.1.0 */
export const textResult = (text: string): CallToolResult => ({
  content: [{ type: "text", text }],
  structuredContent: { content: text }
})
