// Hostile JavaScript values, written once for the suites that throw them at pinnedfs: the Effect
// extension's execute (test/hostile/effect.test.ts), every PinnedRoot method
// (test/hostile/pinned-root.test.ts) and the raw addon in a child process
// (test/hostile/native-binding.child.mjs, hence plain JavaScript).
//
// A value is generated as a plain-data spec ({ s } a path, { n } a number, { b } a BigInt's
// digits, { k } a kind of object) and built inside the property, so a counterexample prints
// readably even when the value is a Proxy or a throwing getter. The kinds that mean the same thing
// everywhere are built here; each suite adds its own (values that reach into its tree, or fight
// its marshalling) by name.
import fc from "fast-check"

/** Numbers at the edges of every mode, id, size and flag a suite reads. */
export const hostileNumbers = [0, -1, 1, 0o7777, 0o10000, 2 ** 53, 2 ** 64, -0, 0.5, NaN, Infinity, -Infinity, 4294967294, 4294967295]

/** An object whose `key` throws `error()` when read: the caller's own failure, coming back. */
export const throwingGetter = (key, error) =>
  Object.defineProperty({}, key, {
    get() {
      throw error()
    },
    enumerable: true
  })

/** Kinds of value with one meaning in every suite. */
const common = {
  undefined: () => undefined,
  null: () => null,
  true: () => true,
  false: () => false,
  symbol: () => Symbol("hostile"),
  nullproto: () => Object.create(null),
  array: () => [],
  strings: () => ["*.txt", "dir/**"],
  mixed: () => ["a", 1, null, {}],
  uint8: () => new Uint8Array([104, 105]),
  int16: () => new Int16Array([1, 2]),
  date: () => new Date(0)
}

/** The paths every hostile suite's tree answers something about: its files, a hard link, an escape. */
const hostilePathNames = [
  "",
  "file.txt",
  "dir",
  "dir/sub/deep.txt",
  "out/secret.txt",
  "hard.txt",
  "../outside/secret.txt",
  "/etc/passwd",
  "a\0b",
  "file.txt/"
]

/**
 * The path arbitrary of a hostile suite: the shared names and the suite's `more`, any string up to
 * `maxLength`, binary strings up to `binary` when given, the suite's `others`, and the names of the
 * `large` paths (built by `buildHostilePath`, so that a counterexample prints short).
 *
 * @param {{ more?: ReadonlyArray<string>, maxLength: number, binary?: number, others?: ReadonlyArray<import("fast-check").Arbitrary<string>>, large?: ReadonlyArray<"BIG" | "COMPONENTS" | "LONGNAME"> }} options
 */
export const hostilePaths = ({ more = [], maxLength, binary, others = [], large = [] }) =>
  fc.oneof(
    fc.constantFrom(...hostilePathNames, ...more),
    fc.string({ maxLength }),
    ...(binary === undefined ? [] : [fc.string({ unit: "binary", maxLength: binary })]),
    ...others,
    ...(large.length === 0 ? [] : [fc.constantFrom(...large)])
  )

/** Builds a path `hostilePaths` drew: a large one from its name, any other as it is. */
export const buildHostilePath = (p) =>
  p === "BIG" ? "a".repeat(100 * 1024) : p === "COMPONENTS" ? "a/".repeat(10_000) : p === "LONGNAME" ? "n".repeat(300) : p

/**
 * The spec arbitrary. `paths`: the suite's path specs (strings its `path` builder understands);
 * `kinds`: the names of the suite's own kinds; `integers`: whether plain integers around 2^32 are
 * drawn too (a suite whose operands are mostly paths may leave them out).
 *
 * @param {{ paths: import("fast-check").Arbitrary<string>, kinds: ReadonlyArray<string>, integers?: boolean }} options
 */
export const hostileSpec = ({ paths, kinds, integers = true }) =>
  fc.oneof(
    { weight: 4, arbitrary: paths.map((s) => ({ s })) },
    ...(integers ? [{ weight: 2, arbitrary: fc.integer({ min: -(2 ** 32), max: 2 ** 33 }).map((n) => ({ n })) }] : []),
    fc.constantFrom(...hostileNumbers).map((n) => ({ n })),
    fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map((b) => ({ b: String(b) })),
    fc.constantFrom(...Object.keys(common), ...kinds).map((k) => ({ k }))
  )

/**
 * Builds a spec: `path` turns a path spec into the string to pass, `kinds` builds the suite's own.
 *
 * @param {{ s: string } | { n: number } | { b: string } | { k: string }} v
 * @param {{ path: (s: string) => unknown, kinds: Record<string, () => unknown> }} suite
 */
export const buildHostile = (v, { path, kinds }) => {
  if ("s" in v) return path(v.s)
  if ("n" in v) return v.n
  if ("b" in v) return BigInt(v.b)
  const make = Object.hasOwn(kinds, v.k) ? kinds[v.k] : Object.hasOwn(common, v.k) ? common[v.k] : undefined
  if (make === undefined) throw new Error(`unknown spec ${JSON.stringify(v)}`)
  return make()
}

/** The refusal words the addon reports (empty for a plain errno). */
const nativeRefusals = new Set(["", "symlink", "escape", "hardlink", "notregular", "badargument", "identity", "toolarge", "writezero"])

/**
 * Throws unless `e` is an error the addon made (a code, a known refusal, a description, an errno),
 * for the suites that call the raw addon: anything else escaped its marshalling.
 */
export const expectNativeError = (e, what) => {
  if (
    typeof e !== "object" ||
    e === null ||
    typeof e.code !== "string" ||
    !nativeRefusals.has(e.refusal) ||
    typeof e.description !== "string" ||
    typeof e.errno !== "number"
  ) {
    throw new Error(`${what}: rejection is not a native error: ${String(e)}`)
  }
}
