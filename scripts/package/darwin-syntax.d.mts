// Types for the macOS syntax check (plain JavaScript so CI runs it without a build step).
export declare const darwinSources: () => Array<string>
export declare const clangArgs: (file: string) => Array<string>
export declare const checkDarwin: (
  compiler: string,
  file: string
) => Promise<{ readonly file: string; readonly ok: boolean; readonly output: string }>
