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
  truth(): { identities: Record<string, string> }
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
  /** Failures the operation itself can answer under the attack, beyond refusalsUnder's. */
  readonly refusals?: (attack: AttackName) => ReadonlyArray<string>
}

/** One phase of a cell: one executor's tries under the running attacker. */
export interface PhaseResult {
  tried: number
  /** Exchanges of the running attack the kernel did during this phase (not park's, not failed ones). */
  swaps: number
  /** Exchanges of the running attack the kernel refused during this phase. */
  failures: number
  escapes: number
  leaked: number
  canaryChanged: number
  /** Answers neither right nor a failure the attack explains. */
  unexpected: number
  /** Tries that ended in a failure only the attack causes (refusalsFor). */
  refused: number
  outcomes: Record<string, number>
  examples: Array<string>
  unexpectedExamples: Array<string>
}

export interface ControlResult extends PhaseResult {
  /** The race found no escape within the control's bound, so the window was opened on demand. */
  forced: boolean
  /** With the window opened: 1 when that try was seen escaping. */
  forcedEscapes?: number
  forcedOutcomes?: Record<string, number>
  /** The try just before, with the window shut: what the detectors made of a right answer. */
  quiet?: { escapes: number; unexpected: number; outcomes: Record<string, number>; examples: Array<string> }
}

export interface CellResult extends PhaseResult {
  control?: ControlResult
}

export declare const raceOps: ReadonlyArray<RaceOp>
export declare const attacks: Record<AttackName, (arena: Arena) => Array<[string, string]>>
export declare const buildAttacker: () => string
export interface Attacker {
  /** Resolves at the attacker's first exchange. */
  readonly started: Promise<unknown>
  /** Stops with every pair back home; counts so far. */
  park(): Promise<{ swaps: number; failures: number; home: boolean }>
  resume(): void
  /** Parked only: every pair exchanged once; true when each exchange was done. */
  exchange(): Promise<boolean>
  stop(): Promise<{ swaps: number; failures: number }>
}
/** Starts the native attacker exchanging each pair of names until stopped. */
export declare const startAttacker: (bin: string, pairs: ReadonlyArray<readonly [string, string]>) => Attacker
/** Compiles a C helper of the tests (repo-relative source) once into build-test-bin/<name>; `shared`: an N-API addon. */
export declare const buildHelper: (source: string, name: string, options?: { readonly shared?: boolean }) => string
export declare const makeArena: (parent?: string) => Arena
export declare const leaks: (arena: Arena, value: unknown) => boolean
export declare const refusalsUnder: (attack: AttackName) => ReadonlyArray<string>
/** The refusals a cell accepts: the attack's own and the operation's. */
export declare const refusalsFor: (op: RaceOp, attack: AttackName) => ReadonlyArray<string>
/**
 * The path-based executor under PinnedRoot's method names. `make` builds it, with `window` (when
 * given) in its check-then-use gap.
 */
export declare const openPathBased: (
  root: string,
  options: { readonly make: (window?: () => Promise<void>) => unknown; readonly window?: () => Promise<void> }
) => Promise<unknown>
export declare const runCell: (options: {
  readonly attackerBin: string
  readonly open: (root: string) => Promise<unknown>
  readonly attack: AttackName
  readonly op: RaceOp
  readonly iterations: number
  readonly seconds: number
  readonly untilEscape?: boolean
  readonly untilRefused?: number
  readonly parent?: string
  readonly control?: {
    readonly open: (root: string, window: () => Promise<void>) => unknown
    readonly iterations: number
    readonly seconds: number
  }
}) => Promise<CellResult>
