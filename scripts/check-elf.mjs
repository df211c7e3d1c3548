#!/usr/bin/env node
// Checks that a built `.node` is the Linux addon its name promises, by reading the ELF file
// itself (no readelf needed): 64-bit little-endian shared object for the right machine,
// only the libc's own libraries in NEEDED, no glibc symbol version newer than the floor we
// claim (or none at all for musl), the Node-API entry point exported, and no static TLS.
//
//   node scripts/check-elf.mjs <file.node> [--target <triple|platform>] [--glibc 2.17]
//
// The target defaults to the platform in the file name (adk-native-plugins.<platform>.node).
// Exits 1 with one line per mismatch.
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import { pathToFileURL } from 'node:url'
import { GLIBC_FLOOR, BINARY_NAME, findTarget } from './cross-targets.mjs'

const MACHINES = { 62: 'x86-64', 183: 'AArch64' }
const MACHINE_FOR_ARCH = { x64: 'x86-64', arm64: 'AArch64' }
const LOADER_ARCH = { x64: 'x86_64', arm64: 'aarch64' }

const ET_DYN = 3
const SHT_DYNSYM = 11
const SHT_DYNAMIC = 6
const SHT_GNU_VERNEED = 0x6ffffffe
const DT_NULL = 0
const DT_NEEDED = 1
const DT_FLAGS = 30
const DF_STATIC_TLS = 0x10
const SHN_UNDEF = 0

/** Libraries a binary for this arch/libc may need: what every such system has. */
export function allowedNeeded(arch, libc) {
  const a = LOADER_ARCH[arch]
  if (libc === 'musl') {
    // musl is one library (libc.so is also the loader); libgcc_s is there wherever Node
    // runs on musl, since Node itself needs libstdc++ and so libgcc.
    return ['libc.so', `libc.musl-${a}.so.1`, `ld-musl-${a}.so.1`, 'libgcc_s.so.1']
  }
  const loader = arch === 'x64' ? 'ld-linux-x86-64.so.2' : 'ld-linux-aarch64.so.1'
  return ['libc.so.6', 'libm.so.6', 'libpthread.so.0', 'libdl.so.2', 'librt.so.1', 'libgcc_s.so.1', loader]
}

const cmpVersion = (a, b) => {
  const pa = a.split('.').map(Number)
  const pb = b.split('.').map(Number)
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0)
    if (d) return d
  }
  return 0
}

/** The facts this check needs, read from an ELF64 image. Throws on a file that is not one. */
export function readElf(buf) {
  if (buf.length < 64 || buf.readUInt32BE(0) !== 0x7f454c46) throw new Error('not an ELF file')
  const cls = buf[4] === 2 ? 64 : buf[4] === 1 ? 32 : null
  const little = buf[5] === 1
  const facts = { class: cls, endian: little ? 'little' : 'big' }
  if (cls !== 64) return facts // every target here is 64-bit; the caller reports the mismatch
  const u16 = (o) => (little ? buf.readUInt16LE(o) : buf.readUInt16BE(o))
  const u32 = (o) => (little ? buf.readUInt32LE(o) : buf.readUInt32BE(o))
  const u64 = (o) => Number(little ? buf.readBigUInt64LE(o) : buf.readBigUInt64BE(o))

  facts.type = u16(16)
  const machine = u16(18)
  facts.machine = MACHINES[machine] ?? `EM ${machine}`
  const shoff = u64(0x28)
  const shentsize = u16(0x3a)
  const shnum = u16(0x3c)
  const sections = []
  for (let i = 0; i < shnum; i++) {
    const o = shoff + i * shentsize
    sections.push({ type: u32(o + 4), offset: u64(o + 24), size: u64(o + 32), link: u32(o + 40), info: u32(o + 44) })
  }
  const strAt = (sec, off) => {
    const start = sec.offset + off
    return buf.toString('latin1', start, buf.indexOf(0, start))
  }

  facts.needed = []
  facts.staticTls = false
  const dyn = sections.find((s) => s.type === SHT_DYNAMIC)
  if (dyn) {
    const dynstr = sections[dyn.link]
    for (let o = dyn.offset; o < dyn.offset + dyn.size; o += 16) {
      const tag = u64(o)
      if (tag === DT_NULL) break
      if (tag === DT_NEEDED) facts.needed.push(strAt(dynstr, u64(o + 8)))
      if (tag === DT_FLAGS) facts.staticTls = (u64(o + 8) & DF_STATIC_TLS) !== 0
    }
  }

  // .gnu.version_r: per needed file, the symbol versions required from it.
  facts.versionsNeeded = {}
  const verneed = sections.find((s) => s.type === SHT_GNU_VERNEED)
  if (verneed) {
    const strs = sections[verneed.link]
    let o = verneed.offset
    for (let i = 0; i < verneed.info; i++) {
      const cnt = u16(o + 2)
      const file = strAt(strs, u32(o + 4))
      const names = (facts.versionsNeeded[file] ??= [])
      let a = o + u32(o + 8)
      for (let j = 0; j < cnt; j++) {
        names.push(strAt(strs, u32(a + 8)))
        a += u32(a + 12)
      }
      const next = u32(o + 12)
      if (!next) break
      o += next
    }
  }

  facts.exports = new Set()
  facts.imports = new Set()
  const dynsym = sections.find((s) => s.type === SHT_DYNSYM)
  if (dynsym) {
    const strs = sections[dynsym.link]
    for (let o = dynsym.offset; o < dynsym.offset + dynsym.size; o += 24) {
      const name = strAt(strs, u32(o))
      if (u16(o + 6) !== SHN_UNDEF) facts.exports.add(name)
      else if (name) facts.imports.add(name)
    }
  }
  return facts
}

/**
 * Checks one file against { arch: 'x64'|'arm64', libc: 'gnu'|'musl', glibc: '2.17' }.
 * Returns { facts, problems } — problems empty when the binary is what it should be.
 */
export function checkElf(file, expect) {
  const facts = readElf(readFileSync(file))
  const problems = []
  if (facts.class !== 64) problems.push(`ELF class is ${facts.class ?? 'unknown'}-bit, expected 64-bit`)
  if (facts.endian !== 'little') problems.push(`${facts.endian}-endian, expected little-endian`)
  if (facts.class !== 64) return { facts, problems }
  if (facts.type !== ET_DYN) problems.push(`ELF type ${facts.type} is not a shared object (ET_DYN)`)
  const machine = MACHINE_FOR_ARCH[expect.arch]
  if (facts.machine !== machine) problems.push(`machine is ${facts.machine}, expected ${machine} for ${expect.arch}`)

  const allowed = allowedNeeded(expect.arch, expect.libc)
  for (const lib of facts.needed) {
    if (!allowed.includes(lib)) problems.push(`NEEDED ${lib} is not allowed for ${expect.libc} (allowed: ${allowed.join(', ')})`)
  }

  const glibcVersions = Object.values(facts.versionsNeeded)
    .flat()
    .filter((v) => v.startsWith('GLIBC_'))
  facts.newestGlibc = glibcVersions
    .map((v) => v.slice('GLIBC_'.length))
    .filter((v) => /^\d+(\.\d+)*$/.test(v))
    .sort(cmpVersion)
    .at(-1)
  if (expect.libc === 'musl') {
    if (glibcVersions.length) problems.push(`musl binary requires glibc symbol versions: ${[...new Set(glibcVersions)].join(', ')}`)
  } else {
    const floor = expect.glibc ?? GLIBC_FLOOR
    const tooNew = [...new Set(glibcVersions)].filter((v) => v === 'GLIBC_PRIVATE' || cmpVersion(v.slice(6), floor) > 0)
    if (tooNew.length) problems.push(`requires ${tooNew.join(', ')}: newer than the glibc ${floor} claimed`)
  }

  if (!facts.exports.has('napi_register_module_v1')) problems.push('does not export napi_register_module_v1: not a Node-API addon')
  // Thread-locals of the initial-exec model take a share of the few KiB of
  // static TLS glibc keeps for every library dlopen()ed later: next to other
  // addons that do the same, loading fails ("cannot allocate memory in
  // static TLS block").
  if (facts.staticTls) problems.push('uses static TLS (DF_STATIC_TLS): dlopen() fails once other libraries used the space glibc keeps for it')
  return { facts, problems }
}

/** Expectation from a triple or napi platform name, or from the file's own name. */
export function expectationFor(file, target, glibc) {
  const name = target ?? basename(file).slice(BINARY_NAME.length + 1, -'.node'.length)
  const t = findTarget(name)
  if (!t) throw new Error(`cannot tell the target of ${file}: pass --target <triple|platform>`)
  return { arch: t.arch, libc: t.libc, glibc: glibc ?? GLIBC_FLOOR, platform: t.platform }
}

export function describe(facts) {
  const versions = Object.entries(facts.versionsNeeded ?? {})
    .map(([f, vs]) => `${f}: ${vs.join(' ')}`)
    .join('; ')
  return [
    `ELF${facts.class} ${facts.endian}-endian ${facts.type === ET_DYN ? 'shared object' : `type ${facts.type}`} ${facts.machine}`,
    `NEEDED ${facts.needed?.join(', ') || '(none)'}`,
    `static TLS ${facts.staticTls ? 'yes' : 'no'}`,
    `newest GLIBC ${facts.newestGlibc ?? '(none)'}`,
    `versions: ${versions || '(none)'}`,
  ].join('\n  ')
}

function main(argv) {
  const args = [...argv]
  const opt = (name) => {
    const i = args.indexOf(name)
    if (i < 0) return undefined
    return args.splice(i, 2)[1]
  }
  const target = opt('--target')
  const glibc = opt('--glibc')
  if (args.length !== 1) {
    console.error('usage: node scripts/check-elf.mjs <file.node> [--target <triple|platform>] [--glibc 2.17]')
    return 2
  }
  const [file] = args
  let result
  try {
    const expect = expectationFor(file, target, glibc)
    result = { expect, ...checkElf(file, expect) }
  } catch (e) {
    console.error(`check-elf: ${file}: ${e.message}`)
    return 1
  }
  const { expect, facts, problems } = result
  const label = `${expect.platform}${expect.libc === 'gnu' ? `, glibc <= ${expect.glibc}` : ''}`
  if (problems.length) {
    console.error(`check-elf: ${file} is not a valid ${label} addon:\n  - ${problems.join('\n  - ')}\n  ${describe(facts)}`)
    return 1
  }
  console.log(`check-elf: ${file} ok (${label})\n  ${describe(facts)}`)
  return 0
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = main(process.argv.slice(2))
