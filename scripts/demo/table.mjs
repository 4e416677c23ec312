// Text a person reads in a terminal, never wider than WIDTH columns: paragraphs folded at a space,
// tables with columns padded, numbers right-aligned, and the last column wrapped to fit.
export const WIDTH = 100

const isNumeric = (s) => /^[\d.,]+( [a-zµ/]+)?$|^[\d.]+×$/.test(s)

/** Splits `text` at spaces into pieces of at most `width` columns (a longer word is cut). */
const wrap = (text, width) => {
  const out = []
  let rest = text
  while (rest.length > width) {
    const cut = rest.lastIndexOf(" ", width)
    const at = cut > 0 ? cut : width
    out.push(rest.slice(0, at))
    rest = rest.slice(at).replace(/^ /, "")
  }
  out.push(rest)
  return out
}

/** Prints `text`, folding each line longer than WIDTH; a folded line's rest is indented by 4 more. */
export const say = (text) => {
  for (const line of text.split("\n")) {
    const indent = " ".repeat(/^ */.exec(line)[0].length + 4)
    const [first, ...more] = wrap(line, WIDTH)
    console.log([first, ...more.flatMap((m) => wrap(m, WIDTH - indent.length).map((p) => indent + p))].join("\n"))
  }
}

export const table = (header, rows) => {
  const all = [header, ...rows].map((r) => r.map(String))
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i].length)))
  const last = widths.length - 1
  const room = WIDTH - 2 - widths.slice(0, last).reduce((a, w) => a + w + 2, 0)
  widths[last] = Math.min(widths[last], Math.max(room, 10))
  const cells = (cell, i) => (isNumeric(cell) && i > 0 ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))
  const lines = (r) => {
    const tail = wrap(r[last], widths[last])
    return tail.map((piece, k) => {
      const row = k === 0 ? [...r.slice(0, last), piece] : [...widths.slice(0, last).map((w) => " ".repeat(w)), piece]
      return `  ${row.map(cells).join("  ")}`.trimEnd()
    })
  }
  return [...lines(all[0]), `  ${widths.map((w) => "-".repeat(w)).join("  ")}`, ...all.slice(1).flatMap(lines)].join("\n")
}
