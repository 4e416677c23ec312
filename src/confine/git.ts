/**
 * Letting git write its repository for one launch (`git: "write"`, `pinnedfs run --git-write`).
 * `.git` is read-only by default because what git keeps there runs code later: a hook, or a config
 * key such as `core.hooksPath`, `core.fsmonitor` or `core.sshCommand`, runs the next time the user
 * runs git, outside any sandbox. A per-file grant cannot make git work either: git writes
 * `index.lock`, `config.lock` and the like beside the file and renames them over it, which needs
 * the directory writable (and a bind-mounted file cannot be renamed over at all).
 *
 * So for this launch the workspace's `.git` directory gets a recursive write grant, and the parts
 * that run code are protected again on top of it (a grant never reopens a separately protected
 * path beneath it): `hooks/` and `config` read-only (each made, empty, when missing, so the child
 * cannot create them), `config.worktree`, the submodules' `modules/**\/hooks` and
 * `modules/**\/config`, and the linked worktrees' `worktrees/*\/commondir` and
 * `worktrees/*\/config.worktree` read-only where they exist. A `--grant` on one of them opens it too.
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import picomatch from "picomatch"
import { ConfinementError } from "./errors.ts"
import type { Grant } from "./grants.ts"
import type { LaunchInputs } from "./plan.ts"
import { type CompiledPolicy, type ProtectedRule, withRules } from "./policy.ts"
import type { ExecutionTarget } from "./target.ts"

/** The grant's id in the plan (`plan.grants.applied`). @since 0.1.0 */
export const gitWriteGrant = "git-write"

const protections: ReadonlyArray<{ readonly relative: string; readonly missing: ProtectedRule["missing"]; readonly why: string }> = [
  { relative: "hooks", missing: "create", why: "git runs its hooks the next time it runs, outside any sandbox" },
  { relative: "config", missing: "create", why: "core.hooksPath, core.fsmonitor, core.sshCommand and aliases run code" },
  { relative: "config.worktree", missing: "ignore", why: "read as config when extensions.worktreeConfig is set" },
  { relative: "modules/**/hooks", missing: "ignore", why: "a submodule's hooks" },
  { relative: "modules/**/config", missing: "ignore", why: "a submodule's config" },
  {
    relative: "worktrees/*/commondir",
    missing: "ignore",
    why: "names the repository a linked worktree's git uses, hooks and config included"
  },
  { relative: "worktrees/*/config.worktree", missing: "ignore", why: "a linked worktree's config" }
]

/**
 * The launch inputs with git allowed to write the workspace's `.git` directory, and its hooks and
 * config protected again (see the module's comment). Full access already writes everything.
 *
 * @since 0.1.0
 */
export const gitWriteInputs = (policy: CompiledPolicy, grants: ReadonlyArray<Grant>, target: ExecutionTarget): LaunchInputs => {
  if (policy.mode === "full-access") return { policy, grants, target }
  const gitDir = path.join(target.workspace, ".git")
  if (gitDir.includes("\\") || picomatch.scan(gitDir).isGlob) {
    throw new ConfinementError(
      "invalid-policy",
      `git write needs rules naming '${gitDir}', and its path holds glob characters a rule cannot name literally`
    )
  }
  const rules = protections.map((p) => ({
    rule: { glob: `${gitDir}/${p.relative}`, access: "read-only" as const, missing: p.missing, hard: true },
    source: "git" as const,
    why: p.why
  }))
  const grant: Grant = Object.freeze({ id: gitWriteGrant, path: gitDir, access: "write", scope: "recursive", lifetime: "session" })
  return { policy: withRules(policy, rules), grants: [...grants, grant], target }
}
