/**
 * The tool table: every tool the server offers, with the name, title, description, input and
 * output schemas and annotations of `@modelcontextprotocol/server-filesystem` (the reference
 * server, MIT-licensed; the descriptions are its own words, kept so that a model sees the same
 * tools). Schemas are zod shapes, declared the SDK's way, so `tools/list` answers the same JSON
 * Schema the reference answers. What each tool does is in its family's module; `server.ts` joins
 * the two.
 *
 * @since 0.1.0
 */
import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js"
import { z } from "zod"

/** @since 0.1.0 @category models */
export interface ToolSpec {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly inputSchema: z.ZodRawShape
  readonly outputSchema: z.ZodRawShape
  readonly annotations: ToolAnnotations
}

const read: ToolAnnotations = { readOnlyHint: true, openWorldHint: false }
const text = { content: z.string() }

const readTextFileInput = {
  path: z.string(),
  tail: z.number().optional().describe("If provided, returns only the last N lines of the file"),
  head: z.number().optional().describe("If provided, returns only the first N lines of the file")
}

const mediaContent = {
  content: z.array(
    z.union([
      z.object({ type: z.enum(["image", "audio"]), data: z.string(), mimeType: z.string() }),
      z.object({
        type: z.literal("resource"),
        resource: z.object({ uri: z.string(), mimeType: z.string().optional(), blob: z.string() })
      })
    ])
  )
}

const within = "Only works within allowed directories."

/**
 * Every tool, in the reference's order (the order `tools/list` answers).
 *
 * @since 0.1.0
 */
export const tools = [
  {
    name: "read_file",
    title: "Read File (Deprecated)",
    description: "Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead.",
    inputSchema: readTextFileInput,
    outputSchema: text,
    annotations: read
  },
  {
    name: "read_text_file",
    title: "Read Text File",
    description:
      "Read the complete contents of a file from the file system as text. " +
      "Handles various text encodings and provides detailed error messages " +
      "if the file cannot be read. Use this tool when you need to examine " +
      "the contents of a single file. Use the 'head' parameter to read only " +
      "the first N lines of a file, or the 'tail' parameter to read only " +
      "the last N lines of a file. Operates on the file as text regardless of extension. " +
      within,
    inputSchema: readTextFileInput,
    outputSchema: text,
    annotations: read
  },
  {
    name: "read_media_file",
    title: "Read Media File",
    description:
      "Read a file and return it as a base64-encoded content block with its MIME type. " +
      "Image and audio files are returned as image/audio content; any other file type is " +
      `returned as an embedded resource. ${within}`,
    inputSchema: { path: z.string() },
    outputSchema: mediaContent,
    annotations: read
  },
  {
    name: "read_multiple_files",
    title: "Read Multiple Files",
    description:
      "Read the contents of multiple files simultaneously. This is more " +
      "efficient than reading files one by one when you need to analyze " +
      "or compare multiple files. Each file's content is returned with its " +
      "path as a reference. Failed reads for individual files won't stop " +
      `the entire operation. ${within}`,
    inputSchema: {
      paths: z
        .array(z.string())
        .min(1)
        .describe("Array of file paths to read. Each path must be a string pointing to a valid file within allowed directories.")
    },
    outputSchema: text,
    annotations: read
  },
  {
    name: "write_file",
    title: "Write File",
    description:
      "Create a new file or completely overwrite an existing file with new content. " +
      "Use with caution as it will overwrite existing files without warning. " +
      `Handles text content with proper encoding. ${within}`,
    inputSchema: { path: z.string(), content: z.string() },
    outputSchema: text,
    annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: true, openWorldHint: false }
  },
  {
    name: "edit_file",
    title: "Edit File",
    description:
      "Make line-based edits to a text file. Each edit replaces exact line sequences " +
      `with new content. Returns a git-style diff showing the changes made. ${within}`,
    inputSchema: {
      path: z.string(),
      edits: z.array(
        z.object({
          oldText: z.string().describe("Text to search for - must match exactly"),
          newText: z.string().describe("Text to replace with")
        })
      ),
      dryRun: z.boolean().default(false).describe("Preview changes using git-style diff format")
    },
    outputSchema: text,
    annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: true, openWorldHint: false }
  },
  {
    name: "create_directory",
    title: "Create Directory",
    description:
      "Create a new directory or ensure a directory exists. Can create multiple " +
      "nested directories in one operation. If the directory already exists, " +
      "this operation will succeed silently. Perfect for setting up directory " +
      `structures for projects or ensuring required paths exist. ${within}`,
    inputSchema: { path: z.string() },
    outputSchema: text,
    annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: false, openWorldHint: false }
  },
  {
    name: "list_directory",
    title: "List Directory",
    description:
      "Get a detailed listing of all files and directories in a specified path. " +
      "Results clearly distinguish between files and directories with [FILE] and [DIR] " +
      "prefixes. This tool is essential for understanding directory structure and " +
      `finding specific files within a directory. ${within}`,
    inputSchema: { path: z.string() },
    outputSchema: text,
    annotations: read
  },
  {
    name: "list_directory_with_sizes",
    title: "List Directory with Sizes",
    description:
      "Get a detailed listing of all files and directories in a specified path, including sizes. " +
      "Results clearly distinguish between files and directories with [FILE] and [DIR] " +
      "prefixes. This tool is useful for understanding directory structure and " +
      `finding specific files within a directory. ${within}`,
    inputSchema: {
      path: z.string(),
      sortBy: z.enum(["name", "size"]).optional().default("name").describe("Sort entries by name or size")
    },
    outputSchema: text,
    annotations: read
  },
  {
    name: "directory_tree",
    title: "Directory Tree",
    description:
      "Get a recursive tree view of files and directories as a JSON structure. " +
      "Each entry includes 'name', 'type' (file/directory), and 'children' for directories. " +
      "Files have no children array, while directories always have a children array (which may be empty). " +
      `The output is formatted with 2-space indentation for readability. ${within}`,
    inputSchema: { path: z.string(), excludePatterns: z.array(z.string()).optional().default([]) },
    outputSchema: text,
    annotations: read
  },
  {
    name: "move_file",
    title: "Move File",
    description:
      "Move or rename files and directories. Can move files between directories " +
      "and rename them in a single operation. If the destination exists, the " +
      "operation will fail. Works across different directories and can be used " +
      "for simple renaming within the same directory. Both source and destination must be within allowed directories.",
    inputSchema: { source: z.string(), destination: z.string() },
    outputSchema: text,
    annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: true, openWorldHint: false }
  },
  {
    name: "search_files",
    title: "Search Files",
    description:
      "Recursively search for files and directories matching a pattern. " +
      "The patterns should be glob-style patterns that match paths relative to the working directory. " +
      "Use pattern like '*.ext' to match files in current directory, and '**/*.ext' to match files in all subdirectories. " +
      "Returns full paths to all matching items. Great for finding files when you don't know their exact location. " +
      "Only searches within allowed directories.",
    inputSchema: { path: z.string(), pattern: z.string(), excludePatterns: z.array(z.string()).optional().default([]) },
    outputSchema: text,
    annotations: read
  },
  {
    name: "get_file_info",
    title: "Get File Info",
    description:
      "Retrieve detailed metadata about a file or directory. Returns comprehensive " +
      "information including size, creation time, last modified time, permissions, " +
      `and type. This tool is perfect for understanding file characteristics without reading the actual content. ${within}`,
    inputSchema: { path: z.string() },
    outputSchema: text,
    annotations: read
  },
  {
    name: "list_allowed_directories",
    title: "List Allowed Directories",
    description:
      "Returns the list of directories that this server is allowed to access. " +
      "Subdirectories within these allowed directories are also accessible. " +
      "Use this to understand which directories and their nested paths are available " +
      "before trying to access files.",
    inputSchema: {},
    outputSchema: text,
    annotations: read
  }
] as const satisfies ReadonlyArray<ToolSpec>

/** @since 0.1.0 @category models */
export type ToolName = (typeof tools)[number]["name"]

/** Whether a tool only reads (the ones `--read-only` keeps). @since 0.1.0 */
export const isReadTool = (spec: ToolSpec): boolean => spec.annotations.readOnlyHint === true
