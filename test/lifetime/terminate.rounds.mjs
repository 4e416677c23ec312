// Runs `rounds` rounds of test/lifetime/terminate.child.mjs under one Node binary, in child
// processes of at most `chunk` rounds each, counting the processes that died (a signal, or an exit
// code other than 0) instead of stopping at the first: the figure is how often the process dies.
// A dead process's unfinished round counts as one round run. Usable from the test and by hand:
//   node test/lifetime/terminate.rounds.mjs <node> <rounds> [chunk] [seed] [simple]
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"

const child = fileURLToPath(new URL("./terminate.child.mjs", import.meta.url))

export const runRounds = (node, rounds, { chunk = 50, seed = 1, simple = false } = {}) => {
  const figures = { node, rounds: 0, crashes: 0, signals: {}, fatal: 0, workers: 0, looping: 0, codes: [], seconds: 0 }
  const started = Date.now()
  let next = seed
  while (figures.rounds < rounds) {
    const want = Math.min(chunk, rounds - figures.rounds)
    const out = spawnSync(node, [child, String(want), String(next++), ...(simple ? ["simple"] : [])], {
      encoding: "utf8",
      timeout: 600_000
    })
    const done = out.stdout.split("\n").filter((l) => l.startsWith("round ")).length
    const summary = out.stdout.trim().split("\n").at(-1) ?? ""
    if (out.status === 0 && out.signal === null && summary.startsWith("{")) {
      const m = JSON.parse(summary)
      figures.rounds += m.rounds
      figures.workers += m.workers
      figures.looping += m.looping
      figures.codes = [...new Set([...figures.codes, ...m.codes])]
      if (!m.secretIntact) throw new Error("the outside directory changed")
    } else {
      figures.crashes++
      figures.rounds += done + 1
      const how = out.signal ?? `exit ${out.status}`
      figures.signals[how] = (figures.signals[how] ?? 0) + 1
      if (/FATAL ERROR/.test(out.stderr)) figures.fatal++
    }
  }
  figures.seconds = Math.round((Date.now() - started) / 1000)
  return figures
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [node, rounds, chunk, seed, simple] = process.argv.slice(2)
  console.log(
    JSON.stringify(
      runRounds(node, Number(rounds), {
        chunk: Number(chunk ?? 50),
        seed: Number(seed ?? 1),
        simple: simple === "simple"
      })
    )
  )
}
