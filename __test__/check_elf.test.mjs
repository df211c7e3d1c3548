// scripts/check-elf.mjs, the gate every cross-built binary passes, checked against the addon
// this very process loads: it must pass for the host's own platform, and each wrong
// expectation (other machine, other libc, an older glibc than it needs) must fail.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { checkElf, readElf } from '../scripts/check-elf.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const glibc = process.report.getReport().header.glibcVersionRuntime
const libc = glibc ? 'gnu' : 'musl'
const arch = process.arch
const addon = `${root}adk-native-plugins.linux-${arch}-${libc}.node`
const skip = process.platform !== 'linux' || !['x64', 'arm64'].includes(arch) ? 'ELF check is for Linux x64/arm64 hosts' : false
const otherArch = arch === 'x64' ? 'arm64' : 'x64'
const checkerCli = (...args) => spawnSync(process.execPath, [`${root}scripts/check-elf.mjs`, ...args], { encoding: 'utf8' })

test('the addon this host loads passes for its own platform', { skip }, () => {
  const { facts, problems } = checkElf(addon, { arch, libc, glibc })
  assert.deepEqual(problems, [])
  assert.equal(facts.class, 64)
  assert.ok(facts.needed.length > 0, 'a dynamic section with NEEDED entries was read')
  if (libc === 'gnu') assert.match(facts.newestGlibc, /^2\.\d+/)
})

test('a wrong machine, libc or glibc floor is reported', { skip }, () => {
  const wrongArch = checkElf(addon, { arch: otherArch, libc, glibc })
  assert.match(wrongArch.problems[0], /^machine is (x86-64|AArch64), expected/)
  // Beyond the machine, only the arch's own dynamic loader (ld-linux-*) may be flagged.
  for (const p of wrongArch.problems.slice(1)) assert.match(p, /^NEEDED ld-/)

  const wrongLibc = checkElf(addon, { arch, libc: libc === 'gnu' ? 'musl' : 'gnu', glibc })
  assert.ok(wrongLibc.problems.some((p) => /^NEEDED \S+ is not allowed/.test(p)), wrongLibc.problems.join('\n'))

  if (libc === 'gnu') {
    // Every glibc binary needs at least GLIBC_2.2.5 (x64) or GLIBC_2.17 (arm64).
    const tooOld = checkElf(addon, { arch, libc, glibc: '2.2' })
    assert.equal(tooOld.problems.length, 1)
    assert.match(tooOld.problems[0], /^requires GLIBC_2\.\S+.*newer than the glibc 2\.2 claimed$/)
  }
})

test('the command line exits 0 on a match and 1 with the reason on a mismatch', { skip }, () => {
  const ok = checkerCli(addon, '--target', `linux-${arch}-${libc}`, '--glibc', glibc ?? '2.17')
  assert.equal(ok.status, 0, ok.stderr)
  assert.match(ok.stdout, / ok \(/)

  const bad = checkerCli(addon, '--target', `linux-${otherArch}-${libc}`, '--glibc', glibc ?? '2.17')
  assert.equal(bad.status, 1)
  assert.match(bad.stderr, /is not a valid linux-\S+.* addon:\n {2}- machine is/)
})

test('a file that is not ELF, or not 64-bit, is refused', () => {
  assert.throws(() => readElf(Buffer.from('{"name": "not elf"}')), /not an ELF file/)
  const elf32 = Buffer.alloc(64)
  elf32.writeUInt32BE(0x7f454c46, 0)
  elf32[4] = 1 // ELFCLASS32
  elf32[5] = 1
  assert.deepEqual(readElf(elf32), { class: 32, endian: 'little' })
})
