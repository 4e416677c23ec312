/**
 * Commander's accumulator for a repeatable option. It starts from nothing rather than from a
 * default `[]`, because commander prints a default in the help ("(default: [])") and every
 * repeatable option here already says what happens when it is not given.
 *
 * @since 0.1.0
 */
export const collect = (value: string, previous: ReadonlyArray<string> | undefined): Array<string> => [...(previous ?? []), value]
