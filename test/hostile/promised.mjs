// For the hostile-input children: calls an async native method, which must hand back a promise,
// never throw synchronously or answer anything else.
export const promised = (f, what) => {
  let p
  try {
    p = f()
  } catch (e) {
    throw new Error(`${what} threw synchronously: ${e instanceof Error ? e.message : String(e)}`)
  }
  if (!(p instanceof Promise)) throw new Error(`${what} returned ${typeof p}, not a promise`)
  return p
}
