/**
 * Composes the kernel for tests: a host layer, a workspace, a grant store, and the tree helpers
 * every suite uses (a snapshot of the disk to prove a denial changed nothing).
 */
import * as NFS from "node:fs"
import * as NPath from "node:path"
import * as NodePath from "@effect/platform-node/NodePath"
import { Effect, type FileSystem, Layer, Option, type Path, PlatformError } from "effect"
import { GrantStore, KernelFileSystem, Permission, Workspace } from "../../../src/kernel/index.ts"

export const kernelLayer = (
  host: Layer.Layer<FileSystem.FileSystem>,
  root: string,
  grants: Layer.Layer<GrantStore.GrantStore, never, Path.Path>
): Layer.Layer<FileSystem.FileSystem | Path.Path, PlatformError.PlatformError> =>
  KernelFileSystem.layer.pipe(Layer.provide(Layer.mergeAll(host, Workspace.layer(root), grants)), Layer.provideMerge(NodePath.layer))

/** Both actions on `glob`: a rule pair for reading and writing alike. */
export const readWrite = (glob: string): ReadonlyArray<GrantStore.Rule> => [
  { action: "fs:read", glob },
  { action: "fs:write", glob }
]

/** Read and write everywhere in the workspace, except what `deny` names. */
export const allowAllBut = (root: string, deny: ReadonlyArray<GrantStore.Rule> = []): GrantStore.Rules => ({
  root,
  allow: readWrite("**"),
  deny
})

/** Read and write everywhere in the workspace. */
export const allowAll = (root: string) => GrantStore.layerRules(allowAllBut(root))

/** Read and write nowhere in the workspace: every guarded method is refused. */
export const denyAll = (root: string) => GrantStore.layerRules({ root, deny: readWrite("**") })

/** Runs a program against the kernel. */
export const run = <A, E>(
  layer: Layer.Layer<FileSystem.FileSystem | Path.Path, PlatformError.PlatformError>,
  program: Effect.Effect<A, E, FileSystem.FileSystem | Path.Path>
): Promise<A> => Effect.runPromise(Effect.scoped(Effect.provide(program, layer)) as Effect.Effect<A, E | PlatformError.PlatformError>)

/** The failure of a program, which must fail. */
export const failure = async <A, E>(
  layer: Layer.Layer<FileSystem.FileSystem | Path.Path, PlatformError.PlatformError>,
  program: Effect.Effect<A, E, FileSystem.FileSystem | Path.Path>
): Promise<E | PlatformError.PlatformError> => run(layer, Effect.flip(program))

/** The kernel's own refusal carried by a PlatformError, or undefined. */
export const kernelCause = (e: unknown): Permission.PermissionError | undefined =>
  PlatformError.isPlatformError(e) ? Option.getOrUndefined(Permission.fromPlatformError(e)) : undefined

export const reasonTag = (e: unknown): string | undefined => (PlatformError.isPlatformError(e) ? e.reason._tag : undefined)

/** Everything under `dirs`: type, mode, inode, content or link text. */
export const snapshotTree = (...dirs: ReadonlyArray<string>): Record<string, string> => {
  const out: Record<string, string> = {}
  const visit = (p: string) => {
    const st = NFS.lstatSync(p)
    const base = `${st.mode.toString(8)} ${st.uid}:${st.gid} ${st.ino} ${st.nlink} ${st.mtimeMs}`
    if (st.isSymbolicLink()) out[p] = `link ${base} ${NFS.readlinkSync(p)}`
    else if (st.isDirectory()) {
      out[p] = `dir ${base}`
      for (const name of NFS.readdirSync(p)) visit(NPath.join(p, name))
    } else if (st.isFile()) out[p] = `file ${base} ${NFS.readFileSync(p, "base64")}`
    else out[p] = `other ${base}`
  }
  for (const dir of dirs) visit(dir)
  return out
}
