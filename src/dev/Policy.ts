/**
 * The host's file policy for dev engines: may this workspace path be read, may it be written.
 *
 * Two properties make it a floor rather than a suggestion:
 *
 * - **It fails closed.** No policy in force, a policy that throws, or one that answers anything but
 *   `true` is a refusal, never an allow. A sandbox that reads "no decision" as "not denied" turns
 *   every configuration mistake into full access.
 * - **The mandatory deny set always applies to writes**, whatever the caller's rules or its own
 *   `Policy` object say (see `mandatory.ts`: `.git`, `.vscode`, the shell start-up files and the
 *   rest, matched by path segment in any letter case, and the directories a workspace points git
 *   at). Each is a file another program later executes or obeys, so writing one is running code
 *   outside the pipeline.
 *
 * @since 0.1.0
 */
import { badArgumentPinnedFsError, permissionDenied, type PinnedFsError } from "../internal/errors.ts"
import { globList } from "./globs.ts"
import { fixedMandatorySet, type MandatorySet } from "./mandatory.ts"
import { escaped } from "./quote.ts"

export { fold, type MandatoryEntry, mandatoryEntries, type MandatorySet, mandatorySetOf, type PointerTarget } from "./mandatory.ts"

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
 * Whether `path` is in the fixed part of the mandatory deny set (the entries of `mandatory.ts`;
 * the pointer targets of a workspace need that workspace, see `mandatorySetOf`).
 *
 * @since 0.1.0
 * @category predicates
 */
export const isMandatoryDenied = (path: string): boolean => fixedMandatorySet.denies(path) !== undefined

/**
 * Compiles glob rules (picomatch, full glob syntax) into a {@link Policy}. The caller's `deny`
 * matches case-insensitively, like the mandatory set: a rule meant to keep something out should
 * not be sidestepped by spelling.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromRules = (rules: PolicyRules): Policy => {
  if (typeof rules !== "object" || rules === null) throw badArgumentPinnedFsError("policy rules must be an object")
  const read = globList(rules.read, "policy read")
  const write = globList(rules.write, "policy write")
  const deny = globList(rules.deny ?? [], "policy deny", { nocase: true })
  return {
    canRead: (path) => read.matches(path) && !deny.matches(path),
    canWrite: (path) => write.matches(path) && !deny.matches(path) && isMandatoryDenied(path) === false
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
 * The decision, or why there is none. The mandatory deny set (`mandatory`, by default its fixed
 * entries) is applied here too, so a hand-written `Policy` that allows everything still cannot
 * write `.git/hooks/pre-commit`.
 *
 * @since 0.1.0
 * @category checks
 */
export const decide = (
  policy: Policy | undefined,
  access: Access,
  path: string,
  mandatory: MandatorySet = fixedMandatorySet
): PinnedFsError | undefined => {
  if (policy === undefined || policy === null) {
    return permissionDenied(
      `no policy is in force, so nothing may be ${access === "read" ? "read" : "written"} (fails closed)`,
      path,
      "policy"
    )
  }
  const shown = escaped(path)
  if (access === "write") {
    const why = mandatory.denies(path)
    if (why !== undefined)
      return permissionDenied(`'${shown}' is in the mandatory deny set, never written: ${escaped(why)}`, path, "policy")
  }
  let answer: unknown
  try {
    answer = access === "read" ? policy.canRead(path) : policy.canWrite(path)
  } catch (e) {
    return permissionDenied(
      `the policy failed while deciding ${access} of '${shown}' (${e instanceof Error ? e.message : String(e)}): refused`,
      path,
      "policy"
    )
  }
  if (answer === true) return undefined
  if (answer === false)
    return permissionDenied(`the policy does not allow ${access === "read" ? "reading" : "writing"} '${shown}'`, path, "policy")
  return permissionDenied(`the policy gave no decision for ${access} of '${shown}' (answered ${String(answer)}): refused`, path, "policy")
}

/**
 * {@link decide} for every access in `accesses`, throwing the first refusal.
 *
 * @since 0.1.0
 * @category checks
 */
export const enforce = (
  policy: Policy | undefined,
  accesses: ReadonlyArray<Access>,
  path: string,
  mandatory: MandatorySet = fixedMandatorySet
): void => {
  for (const a of accesses) {
    const refused = decide(policy, a, path, mandatory)
    if (refused) throw refused
  }
}
