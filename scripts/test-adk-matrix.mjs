#!/usr/bin/env node
// `npm run test:adk-matrix [-- --adk 1.6.0 --adk 2.0.0]`: the node:test suites against each
// @google/adk release users may still be on. 2.0.0 (the devDependency) runs in the repo
// itself; any other version runs in a scratch copy under .cache/adk-matrix/<version>/ with
// its own node_modules, so the repo's node_modules is never touched.
//
// 1.x installs with --legacy-peer-deps: its database drivers (@mikro-orm/*) are required
// peers there (optional from 2.0.0 on), and npm's automatic peer install of them fails on a
// version missing from the registry. The plugins need none of them.
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { ROOT } from './node-dist.mjs'
import { testFiles } from './test-files.mjs'
import { testCounts } from './test-counts.mjs'

const DEFAULT_VERSIONS = ['1.6.0', '2.0.0']
const REPO_ADK = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).devDependencies['@google/adk']
const SKIP_COPY = new Set(['node_modules', 'target', '.cache', '.git'])

function scratchFor(version) {
  const dir = join(ROOT, '.cache', 'adk-matrix', version)
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  pkg.devDependencies['@google/adk'] = version
  const stamp = JSON.stringify(pkg.devDependencies)
  const stampFile = join(dir, '.installed')
  // The repo's sources are copied afresh each run; node_modules only when the deps change.
  mkdirSync(dir, { recursive: true })
  for (const entry of readdirSync(dir)) if (!['node_modules', '.installed'].includes(entry)) rmSync(join(dir, entry), { recursive: true, force: true })
  for (const entry of readdirSync(ROOT)) {
    if (!SKIP_COPY.has(entry)) cpSync(join(ROOT, entry), join(dir, entry), { recursive: true })
  }
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`)
  if (!existsSync(stampFile) || readFileSync(stampFile, 'utf8') !== stamp) {
    console.log(`installing @google/adk@${version} into ${relative(ROOT, dir)}`)
    rmSync(join(dir, 'package-lock.json'), { force: true })
    const args = ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--legacy-peer-deps']
    const r = spawnSync('npm', args, { cwd: dir, stdio: 'inherit' })
    if (r.status !== 0) throw new Error(`npm install @google/adk@${version} failed`)
    writeFileSync(stampFile, stamp)
  }
  return dir
}

function runSuites(cwd, version) {
  const installed = JSON.parse(readFileSync(join(cwd, 'node_modules', '@google', 'adk', 'package.json'), 'utf8')).version
  if (installed !== version) throw new Error(`${cwd} has @google/adk ${installed}, not ${version}`)
  const r = spawnSync(process.execPath, ['--test', '--test-reporter=tap', ...testFiles(cwd)], {
    cwd,
    env: { ...process.env, ADK_NATIVE_PLUGINS_TEST: '1' },
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  })
  const logFile = join(ROOT, '.cache', 'adk-matrix', `${version}.log`)
  mkdirSync(join(ROOT, '.cache', 'adk-matrix'), { recursive: true })
  writeFileSync(logFile, r.stdout + r.stderr)
  const failures = [...r.stdout.matchAll(/^not ok \d+ - (.*)$/gm)].map((m) => m[1])
  // The typings too: index.d.ts names ADK's types, which a TypeScript user compiles against.
  const types = spawnSync(process.execPath, ['scripts/typecheck.mjs'], { cwd, encoding: 'utf8' })
  const typecheck = types.stdout.match(/^typecheck: .*$/m)?.[0] ?? `typecheck exited ${types.status}`
  if (types.status !== 0) failures.push(typecheck)
  return { version, status: r.status || types.status, ...testCounts(r.stdout), failures, typecheck, logFile }
}

function main(argv) {
  const versions = []
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--adk') versions.push(argv[++i])
    else throw new Error(`unknown argument ${argv[i]} (use --adk <version>)`)
  }
  const results = []
  for (const version of versions.length ? versions : DEFAULT_VERSIONS) {
    console.log(`\n=== @google/adk@${version}`)
    const cwd = version === REPO_ADK ? ROOT : scratchFor(version)
    const r = runSuites(cwd, version)
    console.log(`${r.pass} passed, ${r.fail} failed, ${r.skipped} skipped (${(r.duration_ms / 1000).toFixed(0)} s); ${r.typecheck}; log ${relative(ROOT, r.logFile)}`)
    for (const f of r.failures) console.log(`  not ok: ${f}`)
    results.push(r)
  }
  console.log('\n=== test:adk-matrix summary')
  for (const r of results) console.log(`@google/adk@${r.version}: ${r.pass} passed, ${r.fail} failed, ${r.skipped} skipped; ${r.typecheck}`)
  return results.every((r) => r.status === 0) ? 0 : 1
}

try {
  process.exitCode = main(process.argv.slice(2))
} catch (e) {
  console.error(`test:adk-matrix: ${e.message}`)
  process.exitCode = 1
}
