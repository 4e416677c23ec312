/**
 * Where the kernel asks whether a capability is granted, and two stores: rules fixed up front, and
 * a deferred store whose decisions arrive later (the shape of an attended prompt, for tests).
 *
 * @since 0.1.0
 */
import { Context, Deferred, Effect, Glob, Layer, Path, Queue } from "effect"
import type { Action, Capability, PermissionError } from "./Permission.ts"
import { isInside, patternSyntax } from "./internal/paths.ts"
import { PermissionDenied, PermissionRequired } from "./Permission.ts"

/**
 * Decides capabilities. `check` may suspend (a person answering a prompt, a journal being read):
 * the kernel resolves the path again once it returns and refuses if the path moved meanwhile.
 *
 * @since 0.1.0
 * @category services
 */
export class GrantStore extends Context.Service<
  GrantStore,
  {
    readonly check: (capability: Capability) => Effect.Effect<void, PermissionError>
    /**
     * Optional. `true` only when `check` would grant `action` on every resource strictly below
     * `directory`, at once and with no effect of its own (no quota consumed, nothing recorded,
     * nothing waiting on anyone). A listing then keeps the names below such a directory without
     * asking about each: the questions it spares could only have been answered yes, unobserved.
     * `false` whenever in doubt; a store without it is asked name by name.
     */
    readonly grantsBelow?: ((action: Action, directory: string) => boolean) | undefined
  }
>()("pinnedfs/kernel/GrantStore") {}

/**
 * One rule: an action over the resources a glob matches. A relative glob is read against the
 * store's `root`. `times` makes an allow rule a quota, consumed once per capability it grants, in
 * the order checks arrive (`times: 1` is a one-shot grant).
 *
 * @since 0.1.0
 * @category models
 */
export interface Rule {
  readonly action: Action
  readonly glob: string
  readonly times?: number | undefined
}

/** @since 0.1.0 @category models */
export interface Rules {
  /** Relative globs are read against this directory (the workspace, usually). */
  readonly root?: string | undefined
  readonly allow?: ReadonlyArray<Rule> | undefined
  readonly deny?: ReadonlyArray<Rule> | undefined
}

const compile = (path: Path.Path, root: string | undefined, rule: Rule) => {
  const absolute = path.isAbsolute(rule.glob)
  const pattern = absolute || root === undefined ? rule.glob : `${Glob.escape(path.resolve(root))}/${rule.glob}`
  // The directory the rule's literal segments name (`undefined` when a relative rule has no root
  // and so names nothing a kernel asks about), and whether the rule is exactly that directory
  // followed by `/**`: every resource strictly below it.
  const segments = rule.glob.split("/").filter((segment) => segment !== "")
  const firstSyntax = segments.findIndex((segment) => patternSyntax.test(segment))
  const literal = firstSyntax < 0 ? segments : segments.slice(0, firstSyntax)
  const base = absolute ? "/" : root === undefined ? undefined : path.resolve(root)
  const prefix = base === undefined ? undefined : path.join(base, ...literal)
  const everythingBelow = firstSyntax === segments.length - 1 && segments[firstSyntax] === "**"
  return { action: rule.action, glob: Glob.make(pattern, { dot: true }), remaining: rule.times, prefix, everythingBelow }
}

/** Whether `inner` is `outer` or below it (both absolute and normalized). */
const within = (path: Path.Path, outer: string, inner: string) => isInside(path, outer, inner)

/**
 * A store built from allow and deny rules. A deny rule wins over any allow rule; no rule at all is
 * `PermissionRequired`; an exhausted quota no longer allows.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromRules = (rules: Rules): Effect.Effect<GrantStore["Service"], never, Path.Path> =>
  Effect.gen(function* () {
    const path = yield* Path.Path
    const allow = (rules.allow ?? []).map((rule) => compile(path, rules.root, rule))
    const deny = (rules.deny ?? []).map((rule) => compile(path, rules.root, rule))
    const matches = (rule: { readonly action: Action; readonly glob: Glob.Glob }, capability: Capability) =>
      rule.action === capability.action && Glob.match(rule.glob, capability.resource)
    // A rule may match something strictly below `directory` unless its literal part names a
    // directory beside it (neither holds the other).
    const mayMatchBelow = (rule: ReturnType<typeof compile>, directory: string) =>
      rule.prefix === undefined || within(path, directory, rule.prefix) || within(path, rule.prefix, directory)
    const grantsBelow = (action: Action, directory: string) => {
      if (!path.isAbsolute(directory)) return false
      const target = path.normalize(directory)
      // Any deny rule that could match below, or any quota (a question there would consume it),
      // means every name must be asked about.
      if (deny.some((rule) => rule.action === action && mayMatchBelow(rule, target))) return false
      if (allow.some((rule) => rule.action === action && rule.remaining !== undefined && mayMatchBelow(rule, target))) {
        return false
      }
      return allow.some(
        (rule) => rule.action === action && rule.everythingBelow && rule.prefix !== undefined && within(path, rule.prefix, target)
      )
    }
    return GrantStore.of({
      grantsBelow,
      check: (capability) =>
        Effect.suspend((): Effect.Effect<void, PermissionError> => {
          if (deny.some((rule) => matches(rule, capability))) {
            return Effect.fail(new PermissionDenied({ capability, reason: "denied by rule" }))
          }
          const rule = allow.find((rule) => matches(rule, capability) && (rule.remaining === undefined || rule.remaining > 0))
          if (rule === undefined) {
            return Effect.fail(new PermissionRequired({ capability, message: "no grant covers this capability" }))
          }
          if (rule.remaining !== undefined) rule.remaining -= 1
          return Effect.void
        })
    })
  })

/**
 * {@link fromRules} as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerRules = (rules: Rules): Layer.Layer<GrantStore, never, Path.Path> => Layer.effect(GrantStore, fromRules(rules))

/**
 * A check waiting for its decision.
 *
 * @since 0.1.0
 * @category models
 */
export interface PendingGrant {
  readonly capability: Capability
  readonly allow: Effect.Effect<void>
  readonly deny: (reason?: string) => Effect.Effect<void>
  readonly fail: (error: PermissionError) => Effect.Effect<void>
}

/**
 * A store whose every check suspends until the caller decides it. `next` waits for the next check
 * to arrive.
 *
 * @since 0.1.0
 * @category models
 */
export interface DeferredGrants {
  readonly store: GrantStore["Service"]
  readonly next: Effect.Effect<PendingGrant>
}

/**
 * Makes a {@link DeferredGrants}: the kernel's `check` blocks until the test (or a UI) calls
 * `allow` or `deny` on the pending grant `next` hands out.
 *
 * @since 0.1.0
 * @category constructors
 */
export const deferred: Effect.Effect<DeferredGrants> = Effect.gen(function* () {
  const pending = yield* Queue.unbounded<PendingGrant>()
  const store = GrantStore.of({
    check: (capability) =>
      Effect.gen(function* () {
        const decision = yield* Deferred.make<void, PermissionError>()
        yield* Queue.offer(pending, {
          capability,
          allow: Effect.asVoid(Deferred.succeed(decision, undefined)),
          deny: (reason = "denied") => Effect.asVoid(Deferred.fail(decision, new PermissionDenied({ capability, reason }))),
          fail: (error) => Effect.asVoid(Deferred.fail(decision, error))
        })
        return yield* Deferred.await(decision)
      })
  })
  return { store, next: Queue.take(pending) }
})
