#!/usr/bin/env node
// `npm run build:cross [-- --target <triple|platform> ...]`: release builds of the addon for
// every Linux target (or those named), each written to the repo root under napi's name
// (adk-native-plugins.<platform>.node) and then checked by scripts/check-elf.mjs.
//
// Toolchain: cargo-zigbuild + zig from PyPI, in a venv under .cache/ (nothing system-wide),
// and the Rust std for each target from rustup. zig is used for every target, gnu included,
// because it links gnu binaries against an exact old glibc (GLIBC_FLOOR), which a host
// build cannot: `napi build -x` skips zig for the host triple and takes the host's glibc.
// musl addons are built with `-C target-feature=-crt-static`, as napi-rs does: a cdylib
// must link musl dynamically to be dlopen()ed by Node.
import { spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, renameSync, statSync } from 'node:fs'
import { delimiter, join, resolve } from 'node:path'
import { CROSS_TARGETS, findTarget, nodeFileFor, zigTargetFor, GLIBC_FLOOR } from './cross-targets.mjs'
import { checkElf, describe, expectationFor } from './check-elf.mjs'

const ROOT = resolve(import.meta.dirname, '..')
const VENV = join(ROOT, '.cache', 'zig-venv')
// The versions this was proven with.
const PIP_PACKAGES = ['cargo-zigbuild==0.24.1', 'ziglang==0.17.1']
const CRATE_LIB = 'libadk_native_plugins.so'

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: ROOT, ...opts })
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`)
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status}`)
}

function ensureZig() {
  const bin = join(VENV, 'bin')
  if (!existsSync(join(bin, 'cargo-zigbuild'))) {
    console.log(`installing ${PIP_PACKAGES.join(' ')} into ${VENV}`)
    run('python3', ['-m', 'venv', VENV])
    run(join(bin, 'pip'), ['install', '--quiet', ...PIP_PACKAGES])
  }
  // cargo finds `cargo-zigbuild` on PATH; cargo-zigbuild finds zig as `python3 -m ziglang`.
  return { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH}` }
}

function ensureRustTargets(targets) {
  const installed = spawnSync('rustup', ['target', 'list', '--installed'], { encoding: 'utf8' }).stdout ?? ''
  const missing = targets.map((t) => t.triple).filter((t) => !installed.split('\n').includes(t))
  if (missing.length) run('rustup', ['target', 'add', ...missing])
}

function parseTargets(argv) {
  const names = []
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--target') names.push(...(argv[++i] ?? '').split(','))
    else if (argv[i].startsWith('--target=')) names.push(...argv[i].slice(9).split(','))
    else throw new Error(`unknown argument ${argv[i]} (use --target <triple|platform>)`)
  }
  if (!names.length) return CROSS_TARGETS
  return names.map((n) => findTarget(n) ?? fail(`unknown target ${n}; known: ${CROSS_TARGETS.map((t) => t.triple).join(', ')}`))
}

function fail(msg) {
  throw new Error(msg)
}

function buildOne(t, env) {
  const rustflags = [process.env.RUSTFLAGS ?? '']
  if (t.libc === 'musl') rustflags.push('-C target-feature=-crt-static')
  const started = performance.now()
  run('cargo', ['zigbuild', '--release', '--target', zigTargetFor(t)], {
    env: { ...env, RUSTFLAGS: rustflags.join(' ').trim() },
  })
  const seconds = (performance.now() - started) / 1000
  const out = join(ROOT, nodeFileFor(t))
  // Rename over the old file rather than write into it: a running Node may have it mapped.
  const tmp = `${out}.tmp`
  copyFileSync(join(ROOT, 'target', t.triple, 'release', CRATE_LIB), tmp)
  renameSync(tmp, out)
  const { facts, problems } = checkElf(out, expectationFor(out))
  return { target: t, file: nodeFileFor(t), seconds, bytes: statSync(out).size, facts, problems }
}

function main() {
  const targets = parseTargets(process.argv.slice(2))
  const env = ensureZig()
  ensureRustTargets(targets)
  const results = []
  for (const t of targets) {
    console.log(`\n=== ${t.triple} -> ${nodeFileFor(t)} (zig target ${zigTargetFor(t)})`)
    results.push(buildOne(t, env))
  }
  console.log(`\n=== build:cross summary (gnu linked against glibc ${GLIBC_FLOOR})`)
  for (const r of results) {
    const mib = (r.bytes / 1048576).toFixed(2)
    console.log(`${r.problems.length ? 'FAIL' : 'ok  '} ${r.file}  ${r.seconds.toFixed(1)} s  ${mib} MiB`)
    console.log(`  ${describe(r.facts)}`)
    for (const p of r.problems) console.log(`  - ${p}`)
  }
  return results.some((r) => r.problems.length) ? 1 : 0
}

try {
  process.exitCode = main()
} catch (e) {
  console.error(`build:cross: ${e.message}`)
  process.exitCode = 1
}
