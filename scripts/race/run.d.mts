// Types for the race harness (plain JavaScript so `npm run stress` runs it without a build step).

export interface Arena {
  readonly base: string
  readonly root: string
  readonly outside: string
  readonly canary: string
  readonly planted: string
  readonly token: string
  readonly identities: ReadonlySet<string>
  restore(): void
  canaryChanged(): boolean
  resetCanary(): void
  dispose(): void
}

export type AttackName = "symlink" | "dirswap" | "hardlink"

export interface RaceOp {
  readonly name: string
  readonly attacks: ReadonlyArray<AttackName>
  readonly mutates?: boolean
  readonly writes?: boolean
}

export interface CellResult {
  tried: number
  swaps: number
  escapes: number
  leaked: number
  canaryChanged: number
  outcomes: Record<string, number>
  examples: Array<string>
}

export declare const raceOps: ReadonlyArray<RaceOp>
export declare const attacks: Record<AttackName, (arena: Arena) => Array<[string, string]>>
export declare const buildAttacker: () => string
/** Compiles a C helper of the tests (repo-relative source) once into build-test-bin/<name>. */
export declare const buildHelper: (source: string, name: string) => string
export declare const makeArena: (parent?: string) => Arena
export declare const leaks: (arena: Arena, value: unknown) => boolean
export declare const openNaive: (root: string) => unknown
export declare const runCell: (options: {
  readonly attackerBin: string
  readonly open: (root: string) => Promise<unknown>
  readonly attack: AttackName
  readonly op: RaceOp
  readonly iterations: number
  readonly seconds: number
  readonly untilEscape?: boolean
  readonly parent?: string
}) => Promise<CellResult>
