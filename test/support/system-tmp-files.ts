/**
 * The test files whose temporary directory is the run's one on the system's temporary file system
 * (test/support/run-tmpdir.ts), not the one on /dev/shm. Every other file keeps /dev/shm, where
 * making and removing files costs a fraction of what it does on ext4 without a journal.
 * - The files that start sandboxes (bubblewrap, through pinnedfs/confine, `pinnedfs run` or
 *   `pinnedfs fix --confine`). A sandbox mounts a /dev of its own, and the TMPDIR a launch makes
 *   its temporary root in is not shown there: the launch sees that the directory is not the one it
 *   prepared, and refuses to start (docs/confine.md). A file that starts a sandbox and is missing
 *   here fails loudly, so.
 * - The files whose attacks need a freed inode number handed out again, which ext4 does and tmpfs
 *   never does: there the attack could not be set up, and its test would be skipped.
 */
import * as path from "node:path"

const sandboxed: ReadonlyArray<string> = [
  "test/confine/",
  "test/demo/",
  "test/readme/",
  "test/dev/bypass.test.ts",
  "test/dev/cli.test.ts",
  "test/dev/cli-output.test.ts",
  "test/dev/confined.test.ts",
  "test/dev/cli-refused-confine.test.ts",
  "test/dev/scale.test.ts",
  "test/package/consumer.test.ts",
  "test/effect/rootIdentity.test.ts"
]

/** Whether the test file at `file` (absolute) needs the system's temporary file system. */
export const needsSystemTmp = (file: string, repo: string): boolean => {
  const relative = path.relative(repo, file).split(path.sep).join("/")
  return sandboxed.some((entry) => (entry.endsWith("/") ? relative.startsWith(entry) : relative === entry))
}
