// The dynamic-linking facts of a 64-bit little-endian ELF shared object (x86-64, AArch64), read
// from its section headers: the libraries it needs (DT_NEEDED), the symbol versions it needs from
// each (.gnu.version_r), and which undefined symbol asks for which version (.dynsym with
// .gnu.version). Enough to tell whether a prebuild loads on an older glibc, without binutils.
import { readFileSync } from "node:fs"

const SHT_DYNAMIC = 6
const SHT_DYNSYM = 11
const SHT_GNU_VERNEED = 0x6ffffffe
const SHT_GNU_VERSYM = 0x6fffffff
const DT_NEEDED = 1n
const machines = { 62: "x86_64", 183: "aarch64" }

const fail = (file, why) => {
  throw new Error(`${file}: not a readable ELF shared object (${why})`)
}

/**
 * @param {string} file
 * @returns {{
 *   machine: string,
 *   needed: string[],
 *   versions: Array<{ file: string, version: string }>,
 *   undefinedSymbols: Array<{ name: string, version: string | null }>
 * }}
 */
export const readDynamic = (file) => {
  const buf = readFileSync(file)
  if (buf.length < 64 || buf.readUInt32BE(0) !== 0x7f454c46) fail(file, "no ELF magic")
  if (buf[4] !== 2) fail(file, "not ELF64")
  if (buf[5] !== 1) fail(file, "not little-endian")
  const machine = machines[buf.readUInt16LE(18)] ?? `machine ${buf.readUInt16LE(18)}`
  const shoff = Number(buf.readBigUInt64LE(40))
  const shentsize = buf.readUInt16LE(58)
  const shnum = buf.readUInt16LE(60)
  if (shoff === 0 || shnum === 0 || shoff + shnum * shentsize > buf.length) fail(file, "no section headers")

  const sections = []
  for (let i = 0; i < shnum; i++) {
    const at = shoff + i * shentsize
    sections.push({
      type: buf.readUInt32LE(at + 4),
      offset: Number(buf.readBigUInt64LE(at + 24)),
      size: Number(buf.readBigUInt64LE(at + 32)),
      link: buf.readUInt32LE(at + 40),
      info: buf.readUInt32LE(at + 44),
      entsize: Number(buf.readBigUInt64LE(at + 56))
    })
  }
  for (const s of sections) {
    if (s.type !== 8 /* SHT_NOBITS */ && s.offset + s.size > buf.length) fail(file, "a section runs past the end")
  }
  const stringAt = (table, offset) => {
    const start = table.offset + offset
    const end = buf.indexOf(0, start)
    if (offset >= table.size || end < 0 || end >= table.offset + table.size) fail(file, "a string runs past its table")
    return buf.toString("latin1", start, end)
  }
  const one = (type) => sections.find((s) => s.type === type)

  const needed = []
  const dynamic = one(SHT_DYNAMIC)
  if (dynamic) {
    const strtab = sections[dynamic.link]
    for (let at = dynamic.offset; at + 16 <= dynamic.offset + dynamic.size; at += 16) {
      const tag = buf.readBigUInt64LE(at)
      if (tag === 0n) break
      if (tag === DT_NEEDED) needed.push(stringAt(strtab, Number(buf.readBigUInt64LE(at + 8))))
    }
  }

  // Version index → { file, version }, from the verneed chain.
  const byIndex = new Map()
  const versions = []
  const verneed = one(SHT_GNU_VERNEED)
  if (verneed) {
    const strtab = sections[verneed.link]
    let at = verneed.offset
    for (let n = 0; n < verneed.info; n++) {
      const count = buf.readUInt16LE(at + 2)
      const libName = stringAt(strtab, buf.readUInt32LE(at + 4))
      let aux = at + buf.readUInt32LE(at + 8)
      for (let k = 0; k < count; k++) {
        const version = stringAt(strtab, buf.readUInt32LE(aux + 8))
        byIndex.set(buf.readUInt16LE(aux + 6), { file: libName, version })
        versions.push({ file: libName, version })
        const next = buf.readUInt32LE(aux + 12)
        if (next === 0) break
        aux += next
      }
      const next = buf.readUInt32LE(at + 12)
      if (next === 0) break
      at += next
    }
  }

  const undefinedSymbols = []
  const dynsym = one(SHT_DYNSYM)
  const versym = one(SHT_GNU_VERSYM)
  if (dynsym) {
    const strtab = sections[dynsym.link]
    const entsize = dynsym.entsize || 24
    const count = Math.floor(dynsym.size / entsize)
    for (let i = 1; i < count; i++) {
      const at = dynsym.offset + i * entsize
      if (buf.readUInt16LE(at + 6) !== 0) continue // defined here: st_shndx != SHN_UNDEF
      const name = stringAt(strtab, buf.readUInt32LE(at))
      const index = versym ? buf.readUInt16LE(versym.offset + i * 2) & 0x7fff : 1
      undefinedSymbols.push({ name, version: byIndex.get(index)?.version ?? null })
    }
  }
  return { machine, needed, versions, undefinedSymbols }
}

/** `GLIBC_2.28` → [2, 28]; anything else → null. */
const glibcVersion = (v) => {
  const m = /^GLIBC_(\d+)\.(\d+)(?:\.(\d+))?$/.exec(v)
  return m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : null
}

const newer = (a, b) => (a[0] !== b[0] ? a[0] > b[0] : a[1] !== b[1] ? a[1] > b[1] : a[2] > b[2])

/**
 * What stops `file` from loading on a system with glibc `floor` (e.g. "2.28") and no particular
 * libstdc++/libgcc: one line per problem, empty when it loads there.
 */
export const portabilityProblems = (info, floor = "2.28") => {
  const limit = glibcVersion(`GLIBC_${floor}`)
  const problems = []
  for (const lib of info.needed) {
    if (/^lib(stdc\+\+|gcc_s)\.so/.test(lib)) problems.push(`needs ${lib} (link it statically)`)
  }
  const users = (version) =>
    info.undefinedSymbols
      .filter((s) => s.version === version)
      .map((s) => s.name)
      .sort()
  for (const { file, version } of info.versions) {
    const g = glibcVersion(version)
    const tooNew = g ? newer(g, limit) : !/^GLIBC_/.test(version) || version === "GLIBC_PRIVATE"
    if (tooNew) problems.push(`needs ${version} from ${file}: ${users(version).join(", ") || "(no symbol named)"}`)
  }
  return problems
}

/** The report `objdump -T` would let one assemble: libraries, then each version and its users. */
export const describe = (info) => {
  const lines = [`machine ${info.machine}`, `needed ${info.needed.join(", ")}`]
  const byVersion = new Map()
  for (const s of info.undefinedSymbols) {
    const key = s.version ?? "(unversioned)"
    byVersion.set(key, [...(byVersion.get(key) ?? []), s.name])
  }
  const order = [...byVersion.keys()].sort((a, b) => {
    const ga = glibcVersion(a)
    const gb = glibcVersion(b)
    if (ga && gb) return newer(ga, gb) ? 1 : newer(gb, ga) ? -1 : 0
    return a < b ? -1 : a > b ? 1 : 0
  })
  for (const v of order) {
    const names = byVersion.get(v).sort()
    lines.push(`${v.padEnd(14)} ${String(names.length).padStart(3)}  ${names.join(" ")}`)
  }
  return lines.join("\n")
}
