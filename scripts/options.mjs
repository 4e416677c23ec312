// The command-line options of the long-running scripts (npm run fuzz, npm run stress): `--name
// value` pairs, and a `--seconds` that must be a positive number.

/**
 * The value after `--name` in `argv`, or `fallback`.
 *
 * @template F
 * @param {ReadonlyArray<string>} argv
 * @param {string} name
 * @param {F} fallback
 * @returns {string | F}
 */
export const option = (argv, name, fallback) => {
  const at = argv.indexOf(`--${name}`)
  return at >= 0 && argv[at + 1] !== undefined ? argv[at + 1] : fallback
}

/**
 * `--seconds` (default `fallback`); exits 2 saying so when it is not a positive number.
 *
 * @param {ReadonlyArray<string>} argv
 * @param {string} fallback
 */
export const secondsOption = (argv, fallback) => {
  const seconds = Number(option(argv, "seconds", fallback))
  if (!Number.isFinite(seconds) || seconds <= 0) {
    console.error("--seconds must be a positive number")
    process.exit(2)
  }
  return seconds
}
