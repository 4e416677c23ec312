/**
 * Table-driven answers: each `[argument, answer]` row is one call of `f`, and a failure names the
 * argument whose answer differed, which a run of separate `expect(await f(a)).toBe(b)` lines only
 * gives as a line number.
 */
import { expect } from "vitest"

export const expectAnswers = async <A>(f: (argument: string) => Promise<A>, rows: ReadonlyArray<readonly [string, A]>) => {
  for (const [argument, answer] of rows) expect({ argument, got: await f(argument) }).toEqual({ argument, got: answer })
}
