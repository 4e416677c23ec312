/**
 * Another user's ids, for a file given away or a child dropped to: `nobody` (65534) when the tests
 * run as root (CI does), since only root may give a file away or change user; the tests' own ids
 * otherwise, so a test that needs the other user can say why it did not run.
 */

/** nobody's uid and gid. */
export const NOBODY = 65534

/** Whether the tests run as root, and so may chown to and run as {@link NOBODY}. */
export const asRoot = process.getuid?.() === 0

/** The ids a file can be given to here: nobody's as root, else the tests' own. */
export const giveTo: { readonly uid: number; readonly gid: number } = asRoot
  ? { uid: NOBODY, gid: NOBODY }
  : { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 }
