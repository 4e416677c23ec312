/**
 * The host's file policy for dev engines: may this workspace path be read, may it be written.
 *
 * Two properties make it a floor rather than a suggestion:
 *
 * - **It fails closed.** No policy in force, a policy that throws, or one that answers anything but
 *   `true` is a refusal, never an allow. A sandbox that reads "no decision" as "not denied" turns
 *   every configuration mistake into full access.
 * - **The mandatory deny set always applies to writes**, whatever the caller's rules or its own
 *   `Policy` object say: `.bashrc`, `.git/hooks/**`, `.vscode/**`, at any depth and in any letter
 *   case. Each is a file another program later executes or obeys (a shell, git, an editor's tasks
 *   and settings), so writing one is running code outside the pipeline.
 *
 * @since 0.1.0
 */
import { badArgument, permissionDenied, type PinnedFsError } from "../internal/errors.ts"
import { globList } from "./globs.ts"

/**
 * Answers for canonical workspace paths (see `workspacePath`). Anything but `true` refuses.
 *
 * @since 0.1.0
 * @category models
 */
export interface Policy {
  readonly canRead: (path: string) => boolean
  readonly canWrite: (path: string) => boolean
}

/**
 * Glob rules for {@link fromRules}: a path may be read when it matches `read`, written when it
 * matches `write`, and neither when it matches `deny`.
 *
 * @since 0.1.0
 * @category models
 */
export interface PolicyRules {
  readonly read: ReadonlyArray<string>
  readonly write: ReadonlyArray<string>
  readonly deny?: ReadonlyArray<string> | undefined
}

/**
 * The globs no policy can lift, matched case-insensitively at any depth (a directory itself and
 * everything beneath it).
 *
 * @since 0.1.0
 * @category constants
 */
export const mandatoryDeny: ReadonlyArray<string> = ["**/.bashrc", "**/.git/hooks", "**/.git/hooks/**", "**/.vscode", "**/.vscode/**"]

const mandatory = globList(mandatoryDeny, "mandatory deny set", { nocase: true })

/**
 * Whether `path` is in the mandatory deny set.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isMandatoryDenied = (path: string): boolean => mandatory.matches(path)

/**
 * Compiles glob rules (picomatch, full glob syntax) into a {@link Policy}. The caller's `deny`
 * matches case-insensitively, like the mandatory set: a rule meant to keep something out should
 * not be sidestepped by spelling.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromRules = (rules: PolicyRules): Policy => {
  if (typeof rules !== "object" || rules === null) throw badArgument("policy rules must be an object")
  const read = globList(rules.read, "policy read")
  const write = globList(rules.write, "policy write")
  const deny = globList(rules.deny ?? [], "policy deny", { nocase: true })
  return {
    canRead: (path) => read.matches(path) && !deny.matches(path),
    canWrite: (path) => write.matches(path) && !deny.matches(path) && !mandatory.matches(path)
  }
}

/**
 * What a check is for: `read` asks `canRead`, `write` asks `canWrite`.
 *
 * @since 0.1.0
 * @category models
 */
export type Access = "read" | "write"

/**
 * The decision, or why there is none. The mandatory deny set is applied here too, so a
 * hand-written `Policy` that allows everything still cannot write `.git/hooks/pre-commit`.
 *
 * @since 0.1.0
 * @category checks
 */
export const decide = (policy: Policy | undefined, access: Access, path: string): PinnedFsError | undefined => {
  if (policy === undefined || policy === null) {
    return permissionDenied(
      `no policy is in force, so nothing may be ${access === "read" ? "read" : "written"} (fails closed)`,
      path,
      "policy"
    )
  }
  if (access === "write" && mandatory.matches(path)) {
    return permissionDenied(`'${path}' is in the mandatory deny set (.bashrc, .git/hooks, .vscode): never written`, path, "policy")
  }
  let answer: unknown
  try {
    answer = access === "read" ? policy.canRead(path) : policy.canWrite(path)
  } catch (e) {
    return permissionDenied(
      `the policy failed while deciding ${access} of '${path}' (${e instanceof Error ? e.message : String(e)}): refused`,
      path,
      "policy"
    )
  }
  if (answer === true) return undefined
  if (answer === false)
    return permissionDenied(`the policy does not allow ${access === "read" ? "reading" : "writing"} '${path}'`, path, "policy")
  return permissionDenied(`the policy gave no decision for ${access} of '${path}' (answered ${String(answer)}): refused`, path, "policy")
}

/**
 * {@link decide} for every access in `accesses`, throwing the first refusal.
 *
 * @since 0.1.0
 * @category checks
 */
export const enforce = (policy: Policy | undefined, accesses: ReadonlyArray<Access>, path: string): void => {
  for (const a of accesses) {
    const refused = decide(policy, a, path)
    if (refused) throw refused
  }
}
