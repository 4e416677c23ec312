// Types for the Node-line helpers (plain JavaScript so .ci/run and the npm scripts run them unbuilt).
export declare const ranges: ReadonlyArray<{ readonly line: number; readonly floor: ReadonlyArray<number> }>
export declare const lines: ReadonlyArray<number>
export declare const mainLine: number
export declare const floor: string
export declare const belowFloor: (version?: string) => boolean
export declare const supportedNode: (what: string) => string
