/**
 * The error a promise API call must fail with: a `PinnedFsError`, never a plain `Error`, a Node
 * `SystemError` or a resolved value. Asserted here, once, for every suite of the promise API.
 */
import { expect } from "vitest"
import { PinnedFsError } from "../../src/index.ts"

/** Awaits `p`, which must reject with a `PinnedFsError`, and answers that error. */
export const rejection = async (p: Promise<unknown>): Promise<PinnedFsError> => {
  const e = await p.then(
    () => undefined,
    (e: unknown) => e
  )
  expect(e).toBeInstanceOf(PinnedFsError)
  return e as PinnedFsError
}

/**
 * Each call must fail, by rejecting or by throwing, with a `PinnedFsError` of reason BadArgument;
 * a failure names the index of the call that did not.
 */
export const expectEachBadArgument = async (calls: ReadonlyArray<() => unknown>): Promise<void> => {
  for (const [i, call] of calls.entries()) {
    const e = await (async () => call())().then(
      () => undefined,
      (e: unknown) => e
    )
    expect(e, `case ${i}`).toBeInstanceOf(PinnedFsError)
    expect({ i, reason: (e as PinnedFsError).reason }).toEqual({ i, reason: "BadArgument" })
  }
}
