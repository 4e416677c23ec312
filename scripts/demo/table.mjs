// A plain-text table a person can read in a terminal: columns padded, numbers right-aligned.
const isNumeric = (s) => /^[\d.,]+( [a-zµ/]+)?$|^[\d.]+×$/.test(s)

export const table = (header, rows) => {
  const all = [header, ...rows].map((r) => r.map(String))
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i].length)))
  const line = (r) => "  " + r.map((cell, i) => (isNumeric(cell) && i > 0 ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))).join("  ")
  return [line(all[0]), "  " + widths.map((w) => "-".repeat(w)).join("  "), ...all.slice(1).map(line)].map((l) => l.trimEnd()).join("\n")
}
