// Types for scripts/bubblewrap.mjs (plain JavaScript so the npm scripts run it unbuilt).
export declare const bubblewrapDirectory: (what: string, path?: string) => string | { readonly missing: string }
