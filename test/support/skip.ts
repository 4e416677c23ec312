/**
 * A test skipped at run time says why, twice: printed where the run's output shows it, and as the
 * skip's note where the reporter lists skipped tests. A skip without a reason hides coverage.
 */
interface SkippableContext {
  readonly task: { readonly name: string }
  readonly skip: (note?: string) => void
}

/** Skips the running test unless `ready`, printing `why` beside its name. */
export const skipUnless = (ctx: SkippableContext, ready: boolean, why: string): void => {
  if (ready) return
  const reason = `skipped "${ctx.task.name}": ${why}`
  console.log(reason)
  // The reason, just printed, is also the skip's note.
  ctx.skip(reason)
}

/** Why no sandbox can be built here (the reason `sandboxAvailable` gave), for `skipUnless`. */
export const sandboxWhy = (sandbox: { readonly available: true } | { readonly available: false; readonly reason: string }): string =>
  sandbox.available ? "" : `no sandbox here: ${sandbox.reason}`
