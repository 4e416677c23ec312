/**
 * Node's errors from the few calls the kernel makes itself (the verified open and what it does with
 * the descriptor), mapped as every other error in pinnedfs is.
 *
 * @internal
 */
import { PlatformError } from "effect"
import { reasonOf } from "../../internal/errors.ts"

/** @internal */
export const fromNodeError = (method: string, pathOrDescriptor: string | number) => (cause: unknown) => {
  const error = cause as NodeJS.ErrnoException
  const code = typeof error?.code === "string" ? error.code : ""
  const reason = reasonOf(code)
  if (reason === "BadArgument" || code === "ERR_INVALID_ARG_TYPE" || code === "ERR_OUT_OF_RANGE") {
    return PlatformError.badArgument({ module: "FileSystem", method, description: error?.message, cause })
  }
  return PlatformError.systemError({
    _tag: reason,
    module: "FileSystem",
    method,
    pathOrDescriptor,
    syscall: error?.syscall,
    description: error?.message,
    cause
  })
}
