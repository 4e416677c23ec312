// Types for the consumer-project helpers (plain JavaScript so .ci/run runs the warm-up without a build).
export declare const fullDependencies: Readonly<Record<string, string>>
export declare const pack: (destination: string) => { tarball: string; files: Array<string> }
export declare const install: (
  dir: string,
  tarball: string,
  dependencies: Readonly<Record<string, string>>,
  mode: "offline" | "online",
  extra?: ReadonlyArray<string>
) => { ok: boolean; output: string }
