/**
 * The operations' lists, each derived from the one operation table (`opTable.ts`, generated from
 * native/core/request.h). A batch carries reads only, authorization resolves through `resolve`,
 * and a glob travels in a batch as a pinnedfs extension; every set a layer checks against is
 * derived here, so adding a row to the table cannot leave one executor or the kernel behind.
 *
 * @since 0.1.0
 */
import { type OpRow, opTable } from "./opTable.ts"

/** A row's wire names: its own, then its `<name>String` form when it has one. */
type WireNames<R extends OpRow> = R extends { readonly text: true } ? R["name"] | `${R["name"]}String` : R["name"]

const wireNames = (rows: ReadonlyArray<OpRow>): Array<string> => rows.flatMap((r) => (r.text ? [r.name, `${r.name}String`] : [r.name]))

type PathReadRow = Extract<OpRow, { readonly effect: "Read"; readonly pathOnly: true }>
type WriteRow = Extract<OpRow, { readonly effect: "Write"; readonly operand: "Path" | "PathTo" | "Data" }>
type GlobRow = Extract<OpRow, { readonly operand: "Glob" }>
const globs = wireNames(opTable.filter((r) => r.operand === "Glob")) as ReadonlyArray<GlobRow["name"]>
type ProgramRow = Extract<OpRow, { readonly operand: "Plan" | "Owned" }>

/**
 * The public reads of one path, in the table's order: the compact read rows, each with its string
 * form.
 *
 * @since 0.1.0
 * @category operations
 */
export const pathReads = wireNames(opTable.filter((r) => r.effect === "Read" && r.pathOnly)) as ReadonlyArray<WireNames<PathReadRow>>

/** @since 0.1.0 @category operations */
export type PathRead = (typeof pathReads)[number]

/**
 * What a kernel's batch may carry from a caller: the path reads plus a glob (its pattern in `path`).
 *
 * @since 0.1.0
 * @category operations
 */
export const batchReads: ReadonlyArray<PathRead | GlobRow["name"]> = [...pathReads, ...globs]

/** @since 0.1.0 @category operations */
export type BatchRead = (typeof batchReads)[number]

/**
 * What reaches an executor as a one-path read: the path reads plus the rows that only resolve
 * (authorization's `resolve`).
 *
 * @since 0.1.0
 * @category operations
 */
export const executorReads = [...pathReads, ...wireNames(opTable.filter((r) => r.effect === "Resolve"))] as ReadonlyArray<
  PathRead | Extract<OpRow, { readonly effect: "Resolve" }>["name"]
>

/** @since 0.1.0 @category operations */
export type ExecutorRead = (typeof executorReads)[number]

/**
 * The changes of one or two paths an executor performs: the write rows whose operand is a path, a
 * path and its destination, or a path and its data, each with its string form.
 *
 * @since 0.1.0
 * @category operations
 */
export const executorWrites = wireNames(
  opTable.filter((r) => r.effect === "Write" && (r.operand === "Path" || r.operand === "PathTo" || r.operand === "Data"))
) as ReadonlyArray<WireNames<WriteRow>>

/**
 * Every operation an executor's `execute` answers: the reads, `glob`, the changes, and the
 * programs (`batch`, the directory programs `mkdirs` and `rmdirs`). Anything else is malformed.
 *
 * @since 0.1.0
 * @category operations
 */
export const executorOperations = [
  ...executorReads,
  ...globs,
  ...executorWrites,
  "batch",
  ...wireNames(opTable.filter((r) => r.operand === "Plan" || r.operand === "Owned"))
] as ReadonlyArray<ExecutorRead | GlobRow["name"] | WireNames<WriteRow> | "batch" | ProgramRow["name"]>

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
