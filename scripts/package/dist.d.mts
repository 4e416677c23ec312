// Types for the dist/ helpers (plain JavaScript so the demo and .ci/run use them unbuilt).
export declare const distStale: () => boolean
export declare const ensureDist: () => boolean
