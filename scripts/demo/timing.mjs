// Per-read latency of each reader on a quiet tree: sequential awaits, so each number is one
// operation's round trip (thread-pool hop included), the cost a caller actually waits for.
import { performance } from "node:perf_hooks"

export const time = async (reader, relative, iterations) => {
  for (let i = 0; i < Math.min(300, iterations); i++) await reader.read(relative)
  const samples = new Float64Array(iterations)
  const start = performance.now()
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now()
    await reader.read(relative)
    samples[i] = performance.now() - t0
  }
  const total = performance.now() - start
  samples.sort()
  return { median: samples[iterations >> 1] * 1000, mean: (total / iterations) * 1000 }
}
