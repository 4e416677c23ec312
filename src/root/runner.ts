/**
 * What the operations in `src/root/` need of a `PinnedRoot`: its one way to run a native request.
 * An interface of its own, so these modules never import the class they extend.
 *
 * @internal
 */
import type { NativeRequest } from "../internal/native.ts"

/** @internal */
export interface Runner {
  run<A>(request: NativeRequest, shown: string | undefined): Promise<A>
}
