/**
 * The addon's test hooks (the `trips()` counter, mkdirs' `testAfterPlan` steps) are built from a
 * source checkout and left out of the published prebuilds (binding.gyp, `pinnedfs_test_hooks`). A
 * test that needs them skips, saying so, when it runs against a prebuild (CI's Node 22 and 24
 * passes); the source-built pass runs it.
 */
import { native } from "../../src/internal/native.ts"

/** Whether the loaded addon carries the test hooks. */
export const testHooks: boolean = native.testHooks

/** Why a test that needs the hooks did not run. */
export const noTestHooks = "the loaded addon has no test hooks (trips(), testAfterPlan): a published prebuild leaves them out"

/** Trips off the JavaScript thread made so far; call only where `testHooks` holds. */
export const trips = (): number => {
  if (native.trips === undefined) throw new Error(noTestHooks)
  return native.trips()
}
