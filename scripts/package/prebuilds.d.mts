// Types for the prebuild check (plain JavaScript so prepublishOnly runs it without a build step).
export declare const glibcFloor: string
export declare const promised: ReadonlyArray<{ readonly target: string; readonly arch: string; readonly machine: string }>
export declare const prebuildPath: (target: string, packageRoot?: string) => string
export declare const launcherPath: (target: string, packageRoot?: string) => string
export declare const checkPrebuild: (file: string, arch: string) => { report: string; problems: Array<string> }
export declare const checkPromised: (
  packageRoot?: string
) => Array<{ target: string; file: string; report: string; problems: Array<string> }>
export declare const reportPromised: (packageRoot?: string, log?: (line: string) => void, error?: (line: string) => void) => boolean
