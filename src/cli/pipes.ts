/**
 * Output whose reader has gone. `pinnedfs fix --help | head -1` closes the pipe after one line,
 * and Node turns the next write into an `error` event that nobody handles: a stack trace and exit
 * status 1. A shell tool dies quietly of `SIGPIPE` there; Node ignores that signal, so the bin
 * handles the `EPIPE` itself: what is written to a closed stream is dropped, and nothing else
 * changes. In particular a `fix` run is not cut short: the fixer runs to its end, the scope is
 * re-read, a failed step is still rolled back (stopping at the first lost line of progress would
 * leave a half-fixed tree that nobody re-read), and the exit status is the run's own. Help and the
 * version exit 0.
 *
 * @since 0.1.0
 */

/**
 * Makes writes to a closed `stdout` or `stderr` quietly dropped (an `EPIPE` or a write after the
 * stream was destroyed by one). Any other write error (a full disk under a redirection, `EIO`) is
 * no reader having gone: it still fails the process loudly, as before.
 *
 * @since 0.1.0
 */
export const dropWritesToClosedPipes = (streams: ReadonlyArray<NodeJS.WriteStream> = [process.stdout, process.stderr]): void => {
  for (const stream of streams) {
    stream.on("error", (e: NodeJS.ErrnoException) => {
      if (e.code === "EPIPE" || e.code === "ERR_STREAM_DESTROYED") return
      throw e
    })
  }
}
