/**
 * The pinned-root triple, the one shape every layer names a root by: the wire's request fields,
 * the extension's and the fallback's validated roots, and the kernel's stamped root are all this
 * type. Kept apart from the wire module so a layer that only needs the triple does not pull in the
 * request unions.
 *
 * @since 0.1.0
 */

/**
 * A pinned root: `boundaryRoot` is the canonical path the handle is pinned at, `logicalRoot` the
 * workspace as the caller spells it (it may pass through links), `rootIdentity` the `"dev:ino"` the
 * pinned handle must have.
 *
 * `Identity` widens to `string | undefined` only for a kernel over an isolated host, which reports
 * no inode identity; every executor requires the string.
 *
 * @since 0.1.0
 * @category models
 */
export interface Root<Identity extends string | undefined = string> {
  readonly boundaryRoot: string
  readonly logicalRoot: string
  readonly rootIdentity: Identity
}

/**
 * The triple as a request carries it: each field optional on the wire, because a kernel fills them
 * in at its boundary and an executor validates what arrived.
 *
 * @since 0.1.0
 * @category models
 */
export type RootFields = { readonly [K in keyof Root]?: Root[K] | undefined }
