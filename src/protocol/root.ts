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
 * workspace as the caller spells it (it may pass through links), `rootIdentity` the identity the
 * pinned handle must have (see {@link rootIdentityPattern}).
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

/**
 * The shape of a root identity: `"dev:ino"` in decimal, then what tells this directory from one
 * that got the same inode number after it was deleted (ext4 hands a freed number out again at
 * once): `":b<seconds>.<nanoseconds, 9 digits>"`, its birth time, where the file system records
 * one; else `":g<generation>"`, the file system's generation number for the inode, where it has
 * one; else nothing (there a reused number goes unseen). A kernel compares identities as opaque
 * strings; an executor checks this shape before it pins anything.
 *
 * @since 0.1.0
 * @category models
 */
export const rootIdentityPattern: RegExp = /^[0-9]+:[0-9]+(?::b-?[0-9]+\.[0-9]{9}|:g[0-9]+)?$/

/**
 * The root identity Node's `stat(…, { bigint: true })` gives for a directory: `dev:ino` and its
 * birth time when Node reports one (Node reads it from `statx`; a zero is a file system without
 * one). Node cannot ask for the generation number, so where there is no birth time this is
 * `dev:ino` where the native executor's would carry `:g…`: each executor compares identities it
 * made itself.
 *
 * @since 0.1.0
 * @category constructors
 */
export const rootIdentityOf = (st: { readonly dev: bigint; readonly ino: bigint; readonly birthtimeNs: bigint }): string => {
  const plain = `${BigInt.asUintN(64, st.dev)}:${BigInt.asUintN(64, st.ino)}`
  if (st.birthtimeNs === 0n) return plain
  let sec = st.birthtimeNs / 1_000_000_000n
  let nsec = st.birthtimeNs % 1_000_000_000n
  if (nsec < 0n) {
    nsec += 1_000_000_000n
    sec -= 1n
  }
  return `${plain}:b${sec}.${String(nsec).padStart(9, "0")}`
}
