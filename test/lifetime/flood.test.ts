/**
 * Completions a flood left waiting for a later turn (native/settle_pacer.cc) are answered before a
 * loop runs dry, in the main thread and in a worker, and are dropped quietly when a worker is
 * terminated with some still queued: exit 0, no signal, nothing on stderr.
 */
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { expect, it } from "vitest"

const child = fileURLToPath(new URL("./flood.child.mjs", import.meta.url))

it.each([
  ["natural", "2000 paced"],
  ["worker", "2000 paced"],
  ["terminate", "terminated paced"]
])(
  "a paced flood ended by '%s' answers or drops its queue cleanly",
  (how, said) => {
    for (let i = 0; i < 3; i++) {
      const out = spawnSync(process.execPath, [child, how], { encoding: "utf8", timeout: 60_000 })
      expect(out.signal, out.stderr).toBeNull()
      expect(out.stderr).toBe("")
      expect(out.status).toBe(0)
      expect(out.stdout.trim()).toBe(said)
    }
  },
  180_000
)
