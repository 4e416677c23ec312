/**
 * A test skipped at run time says why, twice: printed where the run's output shows it, and as the
 * skip's note where the reporter lists skipped tests. A skip without a reason hides coverage.
 */
interface SkippableContext {
  readonly task: { readonly name: string }
  readonly skip: (note?: string) => void
}

/** Prints a skip's reason where the run's output shows it, and hands it on as the skip's note. */
const printed = (reason: string): string => {
  console.log(reason)
  return reason
}

/** Skips the running test unless `ready`, printing `why` beside its name. */
export const skipUnless = (ctx: SkippableContext, ready: boolean, why: string): void => {
  if (ready) return
  ctx.skip(printed(`skipped "${ctx.task.name}": ${why}`))
}
