/**
 * A process may end with roots open and operations still on libuv's pool: by `process.exit`, by its
 * event loop running dry, or with a worker thread in the same state. It must exit 0, with no abort
 * from an N-API call made during teardown and no signal.
 */
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { expect, it } from "vitest"

const child = fileURLToPath(new URL("./exit.child.mjs", import.meta.url))

it.each(["exit", "natural", "worker"])(
  "ends cleanly by '%s' with roots open and work in flight",
  (how) => {
    // A few times each: whether a job is mid-flight at the exit varies from run to run.
    for (let i = 0; i < 5; i++) {
      const out = spawnSync(process.execPath, [child, how], { encoding: "utf8", timeout: 60_000 })
      expect(out.signal, out.stderr).toBeNull()
      expect(out.stderr).toBe("")
      expect(out.status).toBe(0)
    }
  },
  120_000
)
