/**
 * Loads an optional peer dependency when an adapter first runs, so `pinnedfs/dev` never makes
 * every user install ESLint or Prettier.
 *
 * @since 0.1.0
 */

/**
 * `import(name)`, with a message that says what to install when it is missing.
 *
 * @since 0.1.0
 * @category loading
 */
export const loadOptional = async <A>(name: string, importer: () => Promise<A>): Promise<A> => {
  try {
    return await importer()
  } catch (e) {
    const code = (e as { code?: unknown } | null)?.code
    if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") {
      throw new Error(`pinnedfs/dev: this adapter needs the optional peer dependency '${name}': npm install --save-dev ${name}`, {
        cause: e
      })
    }
    throw e
  }
}
