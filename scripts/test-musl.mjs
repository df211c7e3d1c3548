#!/usr/bin/env node
// `npm run test:musl`: what can be proven of adk-native-plugins.linux-x64-musl.node without a
// musl Node (none is on the registries reachable here): musl's own dynamic loader (Debian's
// `musl` package) loads it in ldd mode and resolves every symbol it imports, leaving only
// the napi_* functions, which the Node executable provides.
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { readElf } from './check-elf.mjs'
import { ROOT } from './node-dist.mjs'

const LOADER = '/lib/ld-musl-x86_64.so.1'
const ADDON = join(ROOT, 'adk-native-plugins.linux-x64-musl.node')

if (!existsSync(ADDON)) {
  console.error('test:musl: adk-native-plugins.linux-x64-musl.node is missing: npm run build:cross -- --target x86_64-unknown-linux-musl')
  process.exit(1)
}
if (!existsSync(LOADER)) {
  const r = spawnSync('apt-get', ['install', '-y', '-qq', 'musl'], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
  if (r.status !== 0) {
    console.error('test:musl: install Debian\'s musl package (apt-get update && apt-get install musl)')
    process.exit(1)
  }
}

const imports = [...readElf(readFileSync(ADDON)).imports]
const out = spawnSync(LOADER, ['--list', ADDON], { encoding: 'utf8' })
const text = out.stdout + out.stderr
const unresolved = new Set([...text.matchAll(/: (\S+): symbol not found/g)].map((m) => m[1]))
const libcImports = imports.filter((s) => !s.startsWith('napi_'))
const bad = [...unresolved].filter((s) => !s.startsWith('napi_'))
console.log(text.split('\n').filter((l) => !l.includes('symbol not found')).join('\n').trim())
console.log(`${imports.length} imported symbols: ${libcImports.length} from libc, all resolved by musl; ${unresolved.size} napi_* left for Node`)
if (bad.length || !text.includes('libc.so =>')) {
  console.error(`test:musl: musl cannot resolve: ${bad.join(', ') || '(libc.so not found)'}`)
  process.exit(1)
}
