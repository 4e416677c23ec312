/**
 * Grants: approved exceptions to the protected-path policy, one exact path each, for reading or
 * for writing, kept apart from the policy. A grant never rewrites a rule, so revoking it restores
 * the rule's restriction at the very next launch; and a grant only ever authorizes a path, never a
 * command.
 *
 * Lifetimes: `"once"` is consumed by the launch that applies it, `"session"` lives as long as the
 * store object, `"persistent"` is also written to the store's file (if it has one) and read back
 * when a store is opened on that file.
 *
 * Scope: a grant names one path. On a file that is exact. On a directory a sandbox can only open
 * the whole tree (a directory bind), so a directory grant must say `scope: "recursive"`: an exact
 * directory grant is reported unapplied rather than silently widened. Even a recursive grant does
 * not reopen a separately protected path beneath it.
 *
 * @since 0.1.0
 */
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { PinnedRoot } from "../PinnedRoot.ts"
import { ConfinementError } from "./errors.ts"

/** @since 0.1.0 @category models */
export interface GrantInput {
  /** Absolute path (a relative one is resolved against the process's working directory). */
  readonly path: string
  readonly access: "read" | "write"
  /** Default `"exact"`. */
  readonly scope?: "exact" | "recursive" | undefined
  /** Default `"session"`. */
  readonly lifetime?: "once" | "session" | "persistent" | undefined
}

/** @since 0.1.0 @category models */
export interface Grant {
  readonly id: string
  readonly path: string
  readonly access: "read" | "write"
  readonly scope: "exact" | "recursive"
  readonly lifetime: "once" | "session" | "persistent"
}

const FILE_VERSION = 1

const validate = (input: GrantInput, id: string): Grant => {
  if (typeof input !== "object" || input === null) throw new ConfinementError("invalid-grant", "a grant must be an object")
  const { access } = input
  const scope = input.scope ?? "exact"
  const lifetime = input.lifetime ?? "session"
  if (typeof input.path !== "string" || input.path === "" || input.path.includes("\0")) {
    throw new ConfinementError("invalid-grant", "a grant's path must be a non-empty string without NUL bytes")
  }
  if (access !== "read" && access !== "write") {
    throw new ConfinementError("invalid-grant", `grant access must be "read" or "write", got '${String(access)}'`)
  }
  if (scope !== "exact" && scope !== "recursive") {
    throw new ConfinementError("invalid-grant", `grant scope must be "exact" or "recursive", got '${String(scope)}'`)
  }
  if (lifetime !== "once" && lifetime !== "session" && lifetime !== "persistent") {
    throw new ConfinementError("invalid-grant", `grant lifetime must be "once", "session" or "persistent", got '${String(lifetime)}'`)
  }
  const resolved = path.resolve(input.path)
  if (resolved === "/") throw new ConfinementError("invalid-grant", "a grant cannot name '/'")
  return Object.freeze({ id, path: resolved, access, scope, lifetime })
}

/**
 * The grants a confinement consults, in insertion order.
 *
 * @since 0.1.0
 * @category constructors
 */
export class GrantStore {
  private readonly grants = new Map<string, Grant>()
  private readonly file: string | undefined
  private version = 0

  private constructor(file: string | undefined) {
    this.file = file
  }

  /** An in-memory store: persistent grants live as long as it does. */
  static memory(): GrantStore {
    return new GrantStore(undefined)
  }

  /**
   * A store whose persistent grants are kept in `file` (JSON, written atomically through a pinned
   * handle on its directory, mode 0600). A missing file is an empty store.
   */
  static async open(file: string): Promise<GrantStore> {
    const store = new GrantStore(path.resolve(file))
    let text: string | undefined
    try {
      text = await fs.promises.readFile(store.file!, "utf8")
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e
    }
    if (text !== undefined) {
      let parsed: unknown
      try {
        parsed = JSON.parse(text)
      } catch (cause) {
        throw new ConfinementError("invalid-grant", `grant file ${store.file} is not JSON`, { cause })
      }
      const body = parsed as { version?: unknown; grants?: unknown }
      if (body?.version !== FILE_VERSION || !Array.isArray(body.grants)) {
        throw new ConfinementError("invalid-grant", `grant file ${store.file} is not a version ${FILE_VERSION} grant file`)
      }
      for (const g of body.grants as Array<GrantInput & { id?: unknown }>) {
        const id = typeof g?.id === "string" ? g.id : randomUUID()
        const grant = validate({ ...g, lifetime: "persistent" }, id)
        store.grants.set(grant.id, grant)
      }
    }
    return store
  }

  /** Grants in force now, in the order they were added. */
  list(): ReadonlyArray<Grant> {
    return [...this.grants.values()]
  }

  /** Changes with every add, revoke and consumption: a launch compares it before it starts. */
  get revision(): number {
    return this.version
  }

  async add(input: GrantInput): Promise<Grant> {
    const grant = validate(input, randomUUID())
    this.grants.set(grant.id, grant)
    this.version++
    if (grant.lifetime === "persistent") await this.save()
    return grant
  }

  /** Removes a grant; true when it was there. The next launch no longer applies it. */
  async revoke(id: string): Promise<boolean> {
    const grant = this.grants.get(id)
    if (!grant) return false
    this.grants.delete(id)
    this.version++
    if (grant.lifetime === "persistent") await this.save()
    return true
  }

  /** Drops the `"once"` grants among `ids`: called by the launch that applied them. @internal */
  consume(ids: ReadonlyArray<string>): void {
    for (const id of ids) {
      if (this.grants.get(id)?.lifetime === "once") {
        this.grants.delete(id)
        this.version++
      }
    }
  }

  private async save(): Promise<void> {
    if (!this.file) return
    const persistent = this.list()
      .filter((g) => g.lifetime === "persistent")
      .map(({ id, path, access, scope }) => ({ id, path, access, scope }))
    const dir = await PinnedRoot.open(path.dirname(this.file))
    try {
      await dir.writeFileString(path.basename(this.file), `${JSON.stringify({ version: FILE_VERSION, grants: persistent }, null, 2)}\n`, {
        atomic: true,
        mode: 0o600
      })
    } finally {
      dir.close()
    }
  }
}
