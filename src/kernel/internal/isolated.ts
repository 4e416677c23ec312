/**
 * Whole-filesystem isolation attestations: a volume that cannot address the host file system at
 * all (an in-memory browser or test volume) may stand in for a descriptor-relative executor. Its
 * executor is a table of handlers, one per wire operation, each calling the volume's own method
 * (the methods table, `methods.ts`, says how for each operation a method of the same name covers).
 * Only `AtomicHandlers` is public (through `pinnedfs/kernel`); the rest is the kernel's own.
 */
import { Effect, type FileSystem, type PlatformError } from "effect"
import {
  type AtomicFileSystem,
  AtomicFileSystemTypeId,
  type AtomicHostFileSystem,
  type AtomicRequest,
  type AtomicResult,
  type AtomicResults,
  withAtomicFileSystem
} from "../../protocol/wire.ts"
import { FileSystemFault } from "../Fault.ts"
import { methodNames, methods } from "./methods.ts"

/**
 * One handler per operation, each receiving its own request and answering its own result. A table
 * missing an operation does not compile. Public through `pinnedfs/kernel`: a client builds the
 * executor of an isolated volume from one.
 *
 * @since 0.1.0
 */
export type AtomicHandlers = {
  readonly [K in keyof AtomicResults]: (
    request: Extract<AtomicRequest, { readonly operation: K }>
  ) => Effect.Effect<AtomicResults[K], PlatformError.PlatformError>
}

/** An operation an attested volume never advertises reached it: a bug, so a defect. @internal */
export const unsupportedIsolated = (operation: string): Effect.Effect<never> =>
  Effect.die(
    new FileSystemFault({
      code: "isolated_operation_unsupported",
      message: `unsupported isolated filesystem operation: ${operation}`
    })
  )

/**
 * The executor a handler table makes. An operation no handler implements can only come from a
 * serialized boundary speaking another build's protocol: it dies rather than calling `undefined`.
 *
 * @internal
 */
export const dispatch = (handlers: AtomicHandlers): AtomicFileSystem["execute"] => {
  // TypeScript cannot relate a key narrowed at run time to the request and result it selects.
  const table = handlers as unknown as Record<
    string,
    ((request: AtomicRequest) => Effect.Effect<unknown, PlatformError.PlatformError>) | undefined
  >
  return <R extends AtomicRequest>(request: R) => {
    const handler = Object.hasOwn(table, request.operation) ? table[request.operation] : undefined
    return (handler === undefined ? unsupportedIsolated(String(request.operation)) : handler(request)) as Effect.Effect<
      AtomicResult<R>,
      PlatformError.PlatformError
    >
  }
}

const decodeBase64 = (data: string): Uint8Array => new Uint8Array(Buffer.from(data, "base64"))

/**
 * Attests that `fileSystem` is isolated as a whole and attaches an executor that delegates to it.
 * Refused (thrown at composition, so such a host cannot be assembled) for a file system that
 * already carries an executor: replacing a descriptor-relative executor with one that delegates to
 * paths would reopen every window the executor closes.
 *
 * @internal
 */
export const withIsolatedFileSystem = (fileSystem: FileSystem.FileSystem): AtomicHostFileSystem => {
  if (AtomicFileSystemTypeId in fileSystem) {
    throw new FileSystemFault({
      code: "executor_already_present",
      message: "filesystem already carries a descriptor-relative executor; attesting whole-filesystem isolation would replace it"
    })
  }
  return withAtomicFileSystem(fileSystem, { isolated: fileSystem, execute: dispatch(volumeHandlers(fileSystem)) })
}

/**
 * The handler table of an isolated volume: for each method row naming how a volume performs the
 * wire operation of its name (`methods.ts`), that; and the wire operations no method row covers,
 * written here.
 */
const volumeHandlers = (fileSystem: FileSystem.FileSystem): AtomicHandlers => {
  const table: Record<string, unknown> = {
    writeFile: (request: Extract<AtomicRequest, { readonly operation: "writeFile" }>) =>
      Effect.flatMap(Effect.try({ try: () => decodeBase64(request.data), catch: (cause) => cause }).pipe(Effect.orDie), (data) =>
        fileSystem.writeFile(request.path, data, request.options)
      ),
    // Authorization asks `resolve` only of an executor claiming `noFollowAuthorization`, which an
    // attested volume never does.
    resolve: (request: AtomicRequest) => unsupportedIsolated(request.operation),
    // No `batchLimits` is advertised, so no kernel frames a batch for this executor.
    batch: (request: AtomicRequest) => unsupportedIsolated(request.operation)
  }
  for (const name of methodNames) {
    const volume = methods[name].volume as ((fs: FileSystem.FileSystem, request: AtomicRequest) => unknown) | undefined
    if (volume !== undefined) table[name] = (request: AtomicRequest) => volume(fileSystem, request)
  }
  return table as AtomicHandlers
}
