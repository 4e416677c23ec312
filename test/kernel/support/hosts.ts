/// <reference types="vite/client" />
/**
 * The hosts every kernel suite runs over: `NodeAtomicFileSystem` under each resolve strategy, the
 * path-based `PathAtomicFileSystem`, and the test double. Every host counts the executor trips the
 * kernel makes (each request to its extension's `execute`), so a trip count is asserted on the real
 * extensions, not only on the double.
 *
 * The two real extensions were written alongside the kernel; they are picked up here by file, so
 * this suite runs over them from the commit they land in. The test below makes their absence loud
 * once their files exist: a host can never silently drop out of the list.
 */
import { Effect, FileSystem, Layer } from "effect"
import { AtomicFileSystemTypeId, type AtomicHostFileSystem, withAtomicFileSystem } from "../../../src/protocol/wire.ts"
import { strategies } from "../../support/strategies.ts"
import { layerFakeAtomic, makeFakeAtomic, type Trips } from "./fakeAtomic.ts"

export interface Host {
  readonly name: string
  /** The executor claims `noFollowAuthorization`: the kernel resolves through it, not the host. */
  readonly noFollow: boolean
  /** A fresh host layer, and every request the kernel sends its extension, in order. */
  readonly make: (options?: { readonly contentLimit?: number }) => {
    readonly layer: Layer.Layer<FileSystem.FileSystem>
    readonly trips: Trips
  }
}

/** `layer` with its extension's `execute` logging each request into the answer's `trips`. */
const counted = (layer: Layer.Layer<FileSystem.FileSystem>): { layer: Layer.Layer<FileSystem.FileSystem>; trips: Trips } => {
  const trips: Trips = { log: [] }
  const wrapped = Layer.effect(
    FileSystem.FileSystem,
    Effect.map(Effect.service(FileSystem.FileSystem), (fs) => {
      const atomic = (fs as AtomicHostFileSystem)[AtomicFileSystemTypeId]
      return withAtomicFileSystem(
        { ...fs },
        {
          ...atomic,
          execute: (request) =>
            Effect.suspend(() => {
              trips.log.push(request)
              return atomic.execute(request)
            })
        }
      )
    })
  ).pipe(Layer.provide(layer))
  return { layer: wrapped, trips }
}

type LayerWith = (options?: {
  readonly contentLimit?: number | undefined
  readonly strategy?: string
}) => Layer.Layer<FileSystem.FileSystem>

const effect = import.meta.glob<{ readonly NodeAtomicFileSystem: { readonly layerWith: LayerWith } }>("../../../src/effect/index.ts", {
  eager: true
})["../../../src/effect/index.ts"]
const fallback = import.meta.glob<{ readonly PathAtomicFileSystem: { readonly layerWith: LayerWith } }>("../../../src/fallback/index.ts", {
  eager: true
})["../../../src/fallback/index.ts"]

export const testDouble: Host = {
  name: "test double",
  noFollow: true,
  make: (options) => {
    const { atomic, trips } = makeFakeAtomic(options)
    return { layer: layerFakeAtomic(atomic), trips }
  }
}

const native: ReadonlyArray<Host> =
  effect === undefined
    ? []
    : strategies.map((strategy) => ({
        name: `NodeAtomicFileSystem (${strategy})`,
        noFollow: true,
        make: (options) => counted(effect.NodeAtomicFileSystem.layerWith({ strategy, contentLimit: options?.contentLimit }))
      }))

const pathBased: ReadonlyArray<Host> =
  fallback === undefined
    ? []
    : [
        {
          name: "PathAtomicFileSystem",
          noFollow: false,
          make: (options) => counted(fallback.PathAtomicFileSystem.layerWith({ contentLimit: options?.contentLimit }))
        }
      ]

export const hosts: ReadonlyArray<Host> = [...native, ...pathBased, testDouble]
