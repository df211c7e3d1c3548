// The release, end to end through a real npm registry: the tarballs that
// `npm run release:local` writes (the same ones the release workflow publishes)
// are published to a throwaway Verdaccio; then, in a fresh folder with cargo and
// rustc removed from PATH, `npm install adk-native-plugins @google/adk` from it
// and run examples/demo.mjs (an agent with both plugins through runGuarded, a
// scripted model, the trace tree on the console). The binary must come from the
// platform package and nothing may be compiled.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { npmRun, startRegistry } from './helpers/registry.mjs'

const repo = fileURLToPath(new URL('..', import.meta.url))
const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'))

function hostPlatform() {
  const { platform, arch } = process
  if (platform === 'linux') return `linux-${arch}-${process.report.getReport().header.glibcVersionRuntime ? 'gnu' : 'musl'}`
  if (platform === 'win32') return `win32-${arch}-msvc`
  return `${platform}-${arch}`
}
const host = hostPlatform()
const platformPackage = `${pkg.name}-${host}`
const binaryFile = `${pkg.napi.binaryName}.${host}.node`

/** The environment with every PATH entry that holds cargo or rustc removed. */
function envWithoutRust() {
  const env = { ...process.env }
  const pathKey = Object.keys(env).find((k) => k.toUpperCase() === 'PATH') ?? 'PATH'
  const exe = process.platform === 'win32' ? '.exe' : ''
  env[pathKey] = env[pathKey]
    .split(delimiter)
    .filter((dir) => dir && !['cargo', 'rustc'].some((tool) => existsSync(join(dir, tool + exe))))
    .join(delimiter)
  for (const k of ['CARGO', 'RUSTC', 'RUSTUP_TOOLCHAIN']) delete env[k]
  return env
}

const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex')

function nodeFilesUnder(dir) {
  return readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.node'))
    .map((f) => join(dir, f))
}

// The demo's tree with durations and token counts dropped (they vary run to run).
const expectedTree = [
  'invoke_agent concierge',
  '└─ invoke_agent concierge',
  '   ├─ chat scripted-concierge',
  '   ├─ execute_tool transfer_to_agent',
  '   └─ invoke_agent forecaster',
  '      ├─ chat scripted-forecaster',
  '      ├─ execute_tool get_forecast ERROR retry 1',
  '      │    Error in tool \'get_forecast\': unknown city "Paris": use "City, Count…',
  '      ├─ chat scripted-forecaster',
  '      ├─ execute_tool get_forecast',
  '      └─ chat scripted-forecaster',
]
const treeLine = (line) => {
  const [, prefix, rest] = /^([ │├└─]*)(.*)$/.exec(line)
  const name = rest
    .replace(/ {2,}[\d.]+ (?:ns|µs|ms|s)\b/, '')
    .replace(/ {2,}in \d+ out \d+/, '')
    .replace(/ {2,}/g, ' ')
  return (prefix + name).trimEnd()
}

test('published tarballs install from a registry without Rust and run both plugins', { timeout: 30 * 60_000 }, async (t) => {
  assert.ok(existsSync(join(repo, binaryFile)), `${binaryFile} must be built first (npm run build)`)
  const work = mkdtempSync(join(tmpdir(), 'adk-native-plugins-install-'))
  let registry
  try {
    // 1. The tarballs, exactly as release:local writes them.
    const tarballs = join(work, 'tarballs')
    const r = spawnSync(process.execPath, [join(repo, 'scripts', 'release-local.mjs'), tarballs], { cwd: repo, encoding: 'utf8' })
    assert.equal(r.status, 0, r.stderr)
    const mainTgz = `${pkg.name}-${pkg.version}.tgz`
    const platformTgz = `${platformPackage}-${pkg.version}.tgz`
    const written = readdirSync(tarballs)
    assert.ok(written.includes(mainTgz) && written.includes(platformTgz), `release:local wrote ${written}`)

    // 2. Published in the workflow's order: platform packages, then the main one.
    registry = await startRegistry()
    const project = join(work, 'project')
    cpSync(join(repo, 'examples', 'demo.mjs'), join(project, 'demo.mjs'))
    writeFileSync(join(project, '.npmrc'), registry.npmrc)
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'install-check', private: true, type: 'module' }))
    for (const tgz of [...written.filter((f) => f !== mainTgz), mainTgz]) registry.publish(join(tarballs, tgz), project)

    // 3. Install with no Rust toolchain reachable.
    const env = envWithoutRust()
    const cargo = spawnSync('cargo', ['--version'], { env, shell: false })
    assert.equal(cargo.error?.code, 'ENOENT', 'cargo must not be on PATH for the install')
    const started = process.hrtime.bigint()
    npmRun(['install', `${pkg.name}@${pkg.version}`, '@google/adk', '--no-audit', '--no-fund'], { cwd: project, env })
    const seconds = Number(process.hrtime.bigint() - started) / 1e9
    t.diagnostic(`npm install ${pkg.name} @google/adk from Verdaccio, no Rust on PATH: ${seconds.toFixed(1)} s`)

    // 4. Nothing compiled: the only native binary in the project is the published one, in its platform package.
    const installed = join(project, 'node_modules', pkg.name)
    const installedPkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'))
    for (const s of ['preinstall', 'install', 'postinstall', 'prepare']) assert.equal(installedPkg.scripts?.[s], undefined, `no ${s} script`)
    // The main package names every platform package of the release (napi prepublish), but
    // only the host's was published here: npm (10 and 11 alike) drops an optional
    // dependency whose registry lookup is a 404, so the others are simply absent.
    assert.deepEqual(Object.keys(installedPkg.optionalDependencies ?? {}).length, pkg.napi.targets.length)
    assert.equal(installedPkg.optionalDependencies[platformPackage], pkg.version)
    const platformDirs = readdirSync(join(project, 'node_modules')).filter((d) => d.startsWith(`${pkg.name}-`))
    assert.deepEqual(platformDirs, [platformPackage])
    const binaries = nodeFilesUnder(join(project, 'node_modules')).map((f) => relative(project, f))
    assert.deepEqual(binaries, [join('node_modules', platformPackage, binaryFile)])
    assert.equal(sha256(join(project, binaries[0])), sha256(join(repo, binaryFile)), 'the published binary, unchanged')
    assert.ok(!existsSync(join(installed, 'target')), 'no cargo target dir')

    // 5. The demo: both plugins through runGuarded, the trace tree printed by the console exporter.
    const probe = join(work, 'loaded_binary.cjs')
    writeFileSync(probe, "process.on('exit', () => { for (const k of Object.keys(require.cache)) if (k.endsWith('.node')) console.log('LOADED ' + k) })\n")
    const demo = spawnSync(process.execPath, ['--require', probe, 'demo.mjs'], { cwd: project, env, encoding: 'utf8', timeout: 60_000 })
    assert.equal(demo.status, 0, `${demo.stdout}\n${demo.stderr}`)
    const out = demo.stdout.split('\n')
    const loaded = out.filter((l) => l.startsWith('LOADED ')).map((l) => l.slice(7))
    assert.deepEqual(loaded, [join(project, 'node_modules', platformPackage, binaryFile)])
    assert.ok(loaded[0].includes(`${sep}node_modules${sep}${platformPackage}${sep}`))
    const traceAt = out.findIndex((l) => /^trace [0-9a-f]{32}$/.test(l))
    assert.ok(traceAt >= 0, `a trace tree is printed:\n${demo.stdout}`)
    const tree = out.slice(traceAt + 1, traceAt + 1 + expectedTree.length).map(treeLine)
    assert.deepEqual(tree, expectedTree)
    assert.ok(out.includes('forecaster> Tomorrow in Paris: sunny, up to 24 °C.'), demo.stdout)
  } catch (err) {
    if (registry) err.message += `\n--- verdaccio log ---\n${registry.log().slice(-4000)}`
    throw err
  } finally {
    await registry?.stop()
    rmSync(work, { recursive: true, force: true })
  }
})
