// Types for the ELF reader (plain JavaScript so prepublishOnly runs it without a build step).
export interface DynamicInfo {
  readonly machine: string
  readonly needed: ReadonlyArray<string>
  readonly versions: ReadonlyArray<{ readonly file: string; readonly version: string }>
  readonly undefinedSymbols: ReadonlyArray<{ readonly name: string; readonly version: string | null }>
}
export declare const readDynamic: (file: string) => DynamicInfo
export declare const portabilityProblems: (info: DynamicInfo, floor?: string) => Array<string>
export declare const describe: (info: DynamicInfo) => string
