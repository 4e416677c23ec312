/**
 * The read operations, listed once. A batch carries reads only, authorization resolves through
 * `resolve`, and a glob travels in a batch as a pinnedfs extension; every set a layer checks
 * against is derived here, so adding a read cannot leave one executor or the kernel behind.
 *
 * @since 0.1.0
 */

/**
 * The public reads of one path, in the order the wire contract lists them.
 *
 * @since 0.1.0
 * @category operations
 */
export const pathReads = ["exists", "stat", "readFile", "readFileString", "readDirectory", "readLink", "realPath"] as const

/** @since 0.1.0 @category operations */
export type PathRead = (typeof pathReads)[number]

/**
 * What a kernel's batch may carry from a caller: the path reads plus a glob (its pattern in `path`).
 *
 * @since 0.1.0
 * @category operations
 */
export const batchReads = [...pathReads, "glob"] as const

/** @since 0.1.0 @category operations */
export type BatchRead = (typeof batchReads)[number]

/**
 * What reaches an executor as a one-path read: the path reads plus authorization's `resolve`.
 *
 * @since 0.1.0
 * @category operations
 */
export const executorReads = [...pathReads, "resolve"] as const

/** @since 0.1.0 @category operations */
export type ExecutorRead = (typeof executorReads)[number]

/**
 * The changes of one or two paths an executor performs, in the order the wire contract lists them.
 *
 * @since 0.1.0
 * @category operations
 */
export const executorWrites = ["makeDirectory", "remove", "rename", "chmod", "chown", "writeFile", "writeFileString"] as const

/**
 * Every operation an executor's `execute` answers: the reads, `glob`, the changes, and the
 * programs (`batch`, the directory programs `mkdirs` and `rmdirs`). Anything else is malformed.
 *
 * @since 0.1.0
 * @category operations
 */
export const executorOperations = [...executorReads, "glob", ...executorWrites, "batch", "mkdirs", "rmdirs"] as const

/** @since 0.1.0 @category operations */
export type ExecutorOperation = (typeof executorOperations)[number]

/**
 * A membership test over one of the lists above, typed so a hit narrows the operation name.
 *
 * @since 0.1.0
 * @category operations
 */
export const isOneOf = <const L extends ReadonlyArray<string>>(list: L) => {
  const set: ReadonlySet<string> = new Set(list)
  return (operation: unknown): operation is L[number] => typeof operation === "string" && set.has(operation)
}
