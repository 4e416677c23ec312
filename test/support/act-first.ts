/**
 * A deterministic "someone else wrote here between the check and the act": wraps a `PinnedRoot` so
 * that the first call of one of the methods that change a file runs `meddle` (a concurrent
 * writer's change, made with plain node:fs) just before the call itself. Whatever the code under
 * test checked before that call, it checked before the change, so a check-then-act sequence loses
 * the change and a compare-and-swap refuses. Nothing happens before `arm()`; `fired` says the
 * change was made (the attack was live).
 */
import type { PinnedRoot } from "../../src/PinnedRoot.ts"

const acts = new Set(["writeFile", "writeFileString", "remove", "rename", "chmod", "replaceIfUnchanged", "removeIfUnchanged"])

export interface ActFirst {
  readonly root: PinnedRoot
  readonly arm: () => void
  readonly fired: () => boolean
}

export const actFirst = (root: PinnedRoot, meddle: () => void): ActFirst => {
  let armed = false
  let fired = false
  const proxy = new Proxy(root, {
    get(target, key) {
      // Private fields need the real instance as `this`.
      const value: unknown = Reflect.get(target, key, target)
      if (typeof value !== "function") return value
      const bound = (value as (...args: Array<unknown>) => unknown).bind(target)
      if (typeof key !== "string" || !acts.has(key)) return bound
      return (...args: Array<unknown>) => {
        if (armed && !fired) {
          fired = true
          meddle()
        }
        return bound(...args)
      }
    }
  })
  return {
    root: proxy,
    arm: () => {
      armed = true
    },
    fired: () => fired
  }
}
