// Types for hostile.mjs (plain JavaScript so the addon's child-process suites can load it).
import type { Arbitrary } from "fast-check"

export type HostileSpec = { s: string } | { n: number } | { b: string } | { k: string }
export declare const hostileNumbers: ReadonlyArray<number>
export declare const hostileSpec: (options: {
  readonly paths: Arbitrary<string>
  readonly kinds: ReadonlyArray<string>
  readonly integers?: boolean
}) => Arbitrary<HostileSpec>
export declare const buildHostile: (
  v: HostileSpec,
  suite: { readonly path: (s: string) => unknown; readonly kinds: Record<string, () => unknown> }
) => unknown
/** An object whose `key` throws `error()` when read. */
export declare const throwingGetter: (key: string, error: () => Error) => object
/** Throws unless `e` is an error the addon made. */
export declare const expectNativeError: (e: unknown, what: string) => void
/** The path arbitrary of a hostile suite (hostile.mjs says what it draws). */
export declare const hostilePaths: (options: {
  readonly more?: ReadonlyArray<string>
  readonly maxLength: number
  readonly binary?: number
  readonly others?: ReadonlyArray<Arbitrary<string>>
  readonly large?: ReadonlyArray<"BIG" | "COMPONENTS" | "LONGNAME">
}) => Arbitrary<string>
/** Builds a path `hostilePaths` drew. */
export declare const buildHostilePath: (p: string) => string
