/**
 * `pinnedfs/fallback`: the path-based baseline of the atomic host extension. Racy by design; read
 * {@link PathAtomicFileSystem} before using it for anything.
 *
 * @since 0.1.0
 */
export * as PathAtomicFileSystem from "./PathAtomicFileSystem.ts"
