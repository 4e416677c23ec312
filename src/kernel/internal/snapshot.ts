/**
 * Options are copied before any asynchronous check: a caller that mutates its options object (or
 * hands in a getter) while a grant decision is pending must not change what is executed.
 *
 * @internal
 */

/** A deep, frozen copy of plain data; accessors are read once, at the call. @internal */
export const snapshot = <T>(value: T): T => {
  if (value instanceof Uint8Array) return value.slice() as T
  if (Array.isArray(value)) return Object.freeze(value.map(snapshot)) as T
  if (typeof value !== "object" || value === null) return value
  if (value instanceof Date) return new Date(value.getTime()) as T
  const copy: Record<string, unknown> = {}
  for (const key of Object.keys(value)) copy[key] = snapshot((value as Record<string, unknown>)[key])
  return Object.freeze(copy) as T
}
