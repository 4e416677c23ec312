/**
 * Test seam, not API (the package's exports do not reach this module): the path-based executor
 * with a window in the gap between each operation's last check and its use. The race harness's
 * control is this executor; the window is how the harness makes an exchange land in that gap on
 * demand, so the control's exposure is shown every run rather than whenever a race happens to
 * find it. Everything else is `PathAtomicFileSystem.make` exactly.
 *
 * @internal
 */
import type { AtomicFileSystem } from "../protocol/wire.ts"
import type { CheckThenUseWindow } from "./confine.ts"
import { executor, limitsOf } from "./execute.ts"
import { defaults, type Options } from "./PathAtomicFileSystem.ts"

export type { CheckThenUseWindow } from "./confine.ts"

/** `PathAtomicFileSystem.make(options)`, with `window` awaited between every check and its use. @internal */
export const makeWithCheckThenUseWindow = (window: CheckThenUseWindow, options: Options = {}): AtomicFileSystem =>
  executor(limitsOf(options, defaults), window)
