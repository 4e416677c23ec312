/**
 * Each tool's handler, by name: the join between the tool table (`tools.ts`) and the families that
 * do the work. Arguments arrive already checked against the tool's input schema by the SDK.
 *
 * @since 0.1.0
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import type { Context } from "./context.ts"
import { getFileInfo, listAllowedDirectories } from "./info.ts"
import { directoryTree, listDirectory, listDirectoryWithSizes } from "./listings.ts"
import { readMediaFile, readMultipleFiles, readTextFile } from "./reads.ts"
import { searchFiles } from "./search.ts"
import type { ToolName } from "./tools.ts"
import { createDirectory, editFile, moveFile, writeFile } from "./writes.ts"

/** @since 0.1.0 @category models */
export type Handler = (ctx: Context, args: never) => Promise<CallToolResult>

/** @since 0.1.0 */
export const handlers: Record<ToolName, Handler> = {
  read_file: readTextFile,
  read_text_file: readTextFile,
  read_media_file: readMediaFile,
  read_multiple_files: readMultipleFiles,
  write_file: writeFile,
  edit_file: editFile,
  create_directory: createDirectory,
  list_directory: listDirectory,
  list_directory_with_sizes: listDirectoryWithSizes,
  directory_tree: directoryTree,
  move_file: moveFile,
  search_files: searchFiles,
  get_file_info: getFileInfo,
  list_allowed_directories: listAllowedDirectories
}
