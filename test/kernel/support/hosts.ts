/**
 * The hosts every kernel suite runs over. The test double stands in until the real extensions land;
 * `NodeAtomicFileSystem.layer` and `PathAtomicFileSystem` join this list when they are on main.
 */
import type { FileSystem, Layer } from "effect"
import { layerFakeAtomic, makeFakeAtomic, type Trips } from "./fakeAtomic.ts"

export interface Host {
  readonly name: string
  /** A fresh host layer; `trips` when the host counts executor requests. */
  readonly make: (options?: { readonly contentLimit?: number }) => {
    readonly layer: Layer.Layer<FileSystem.FileSystem>
    readonly trips?: Trips | undefined
  }
}

export const testDouble: Host = {
  name: "test double",
  make: (options) => {
    const { atomic, trips } = makeFakeAtomic(options)
    return { layer: layerFakeAtomic(atomic), trips }
  }
}

export const hosts: ReadonlyArray<Host> = [testDouble]
