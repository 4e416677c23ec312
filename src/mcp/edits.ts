/**
 * `edit_file`'s text work, as the reference does it: line endings made LF, each edit applied in
 * turn (an exact match first, else a line-by-line match that ignores each line's surrounding white
 * space and keeps the file's indentation), and a unified diff fenced with enough backticks. Pure
 * functions: reading the file and publishing the result are in `writes.ts`.
 *
 * @since 0.1.0
 */
import { createTwoFilesPatch } from "diff"
import { ToolFailure } from "./failures.ts"
import { normalizeLineEndings } from "./lines.ts"

/** @since 0.1.0 @category models */
export interface Edit {
  readonly oldText: string
  readonly newText: string
}

const indentOf = (line: string | undefined): string => line?.match(/^\s*/)?.[0] ?? ""

/** The same edit matched line by line, ignoring surrounding white space; undefined when nothing matches. */
const byLines = (content: string, oldText: string, newText: string): string | undefined => {
  const oldLines = oldText.split("\n")
  const lines = content.split("\n")
  for (let i = 0; i <= lines.length - oldLines.length; i++) {
    const matches = oldLines.every((old, j) => old.trim() === lines[i + j]!.trim())
    if (!matches) continue
    const indent = indentOf(lines[i])
    const replacement = newText.split("\n").map((line, j) => {
      if (j === 0) return indent + line.trimStart()
      const oldIndent = indentOf(oldLines[j])
      const newIndent = indentOf(line)
      if (oldIndent && newIndent) return indent + " ".repeat(Math.max(0, newIndent.length - oldIndent.length)) + line.trimStart()
      return line
    })
    lines.splice(i, oldLines.length, ...replacement)
    return lines.join("\n")
  }
  return undefined
}

/**
 * `content` (already LF) with every edit applied in order; an edit that matches nowhere fails the
 * whole call with the reference's text.
 *
 * @since 0.1.0
 */
export const applyEdits = (content: string, edits: ReadonlyArray<Edit>): string => {
  let modified = content
  for (const edit of edits) {
    const oldText = normalizeLineEndings(edit.oldText)
    const newText = normalizeLineEndings(edit.newText)
    if (modified.includes(oldText)) {
      modified = modified.replace(oldText, () => newText)
      continue
    }
    const replaced = byLines(modified, oldText, newText)
    if (replaced === undefined) throw new ToolFailure(`Could not find exact match for edit:\n${edit.oldText}`)
    modified = replaced
  }
  return modified
}

/**
 * The unified diff between the two texts under `file`'s name, in a ```diff fence one backtick
 * longer than any run of backticks inside it.
 *
 * @since 0.1.0
 */
export const fencedDiff = (file: string, before: string, after: string): string => {
  const diff = createTwoFilesPatch(file, file, normalizeLineEndings(before), normalizeLineEndings(after), "original", "modified")
  let ticks = 3
  while (diff.includes("`".repeat(ticks))) ticks++
  const fence = "`".repeat(ticks)
  return `${fence}diff\n${diff}${fence}\n\n`
}
