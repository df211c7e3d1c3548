// When no native binary fits the machine, loading the package fails with one
// clear message (lib/native.js), not napi's generic loader error: it names the
// detected platform, arch and libc, the published platforms and the command
// that builds from source, and keeps napi's error as `cause`.
// Each case runs in a child process, since a failed load is cached per process.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const repo = fileURLToPath(new URL('..', import.meta.url))
const pkg = JSON.parse(spawnSync(process.execPath, ['-p', 'JSON.stringify(require("./package.json"))'], { cwd: repo, encoding: 'utf8' }).stdout)
const published = [
  'linux-x64-gnu', 'linux-arm64-gnu', 'linux-x64-musl', 'linux-arm64-musl',
  'darwin-x64', 'darwin-arm64', 'win32-x64-msvc', 'win32-arm64-msvc',
]
const isLinux = process.platform === 'linux'
const libc = isLinux ? (process.report.getReport().header.glibcVersionRuntime ? 'glibc' : 'musl') : null

/** Requires `entry` in a fresh node and returns the error it threw, as plain data. */
function loadFailure(entry, { env = {}, preload } = {}) {
  const args = []
  if (preload) args.push('--require', preload)
  const script = `
    try { require(${JSON.stringify(entry)}); console.log(JSON.stringify({ loaded: true })) }
    catch (e) {
      const chain = []
      for (let c = e.cause; c; c = c.cause) chain.push({ message: String(c.message).split('\\n')[0], code: c.code })
      console.log(JSON.stringify({ message: e.message, code: e.code, chain }))
    }`
  const r = spawnSync(process.execPath, [...args, '-e', script], { encoding: 'utf8', env: { ...process.env, ...env } })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

function assertCommon(err) {
  assert.equal(err.loaded, undefined, 'the package must not load here')
  assert.equal(err.code, 'ADK_NATIVE_PLUGINS_NO_BINARY')
  assert.match(err.message, /^adk-native-plugins: no native binary could be loaded for /)
  assert.ok(err.message.includes(`Prebuilt binaries are published for: ${published.join(', ')}.`), err.message)
  assert.ok(err.message.includes('npm ci && npm run build'), err.message)
  assert.doesNotMatch(err.message, /Cannot find native binding/, 'napi\'s generic text stays in cause')
  assert.match(err.chain[0].message, /Cannot find native binding/, 'napi\'s error is the cause')
  assert.ok(err.chain.slice(1).some((c) => c.code === 'MODULE_NOT_FOUND'), 'the individual load failures stay reachable')
}

test('published platform list matches package.json napi.targets', () => {
  assert.equal(pkg.napi.targets.length, published.length)
})

test('an unsupported CPU names the platform, arch, libc and that nothing is published for it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'adk-native-arch-'))
  try {
    const preload = join(dir, 'fake_arch.cjs')
    writeFileSync(preload, "Object.defineProperty(process, 'arch', { value: 's390x' })\n")
    const err = loadFailure(join(repo, 'index.js'), { preload })
    assertCommon(err)
    assert.ok(err.message.includes(`for ${process.platform}/s390x${libc ? ` (${libc}` : ''}`), err.message)
    const host = isLinux ? `linux-s390x-${libc === 'musl' ? 'musl' : 'gnu'}` : `${process.platform}-s390x`
    assert.ok(err.message.includes(`No prebuilt binary is published for ${host}.`), err.message)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a published platform whose package is not installed says so and how to reinstall', () => {
  // The installed main package without its platform package: package.json, the
  // generated loader and lib/native.js, with no binary beside them or in node_modules.
  const dir = mkdtempSync(join(tmpdir(), 'adk-native-missing-'))
  try {
    for (const f of ['package.json', 'binding.js']) cpSync(join(repo, f), join(dir, f))
    mkdirSync(join(dir, 'lib'))
    cpSync(join(repo, 'lib', 'native.js'), join(dir, 'lib', 'native.js'))
    const err = loadFailure(join(dir, 'lib', 'native.js'))
    assertCommon(err)
    const detected = `${process.platform}/${process.arch}`
    assert.ok(err.message.includes(`for ${detected}`), err.message)
    const host = isLinux ? `linux-${process.arch}-${libc === 'musl' ? 'musl' : 'gnu'}` : null
    if (host && published.includes(host)) {
      assert.ok(err.message.includes(`published as adk-native-plugins-${host}@${pkg.version}, but it is not installed`), err.message)
      assert.match(err.message, /--omit=optional/)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('NAPI_RS_NATIVE_LIBRARY_PATH pointing at nothing is named', () => {
  const missing = join(tmpdir(), 'adk-native-plugins-no-such-file.node')
  const err = loadFailure(join(repo, 'index.js'), { env: { NAPI_RS_NATIVE_LIBRARY_PATH: missing } })
  assertCommon(err)
  assert.ok(err.message.includes(`NAPI_RS_NATIVE_LIBRARY_PATH is set to ${missing}, which could not be loaded.`), err.message)
})

test('with a binary present the package loads', () => {
  assert.deepEqual(loadFailure(join(repo, 'index.js')), { loaded: true })
})

test('the addon loads beside other copies of itself: it takes none of the static TLS glibc keeps for dlopen()', { skip: libc === 'glibc' ? false : 'glibc only' }, () => {
  // Three copies stand for the other addons of an application: with
  // initial-exec thread-locals each took a share of that space, and the
  // third failed with "cannot allocate memory in static TLS block".
  const built = join(repo, `adk-native-plugins.linux-${process.arch}-gnu.node`)
  const dir = mkdtempSync(join(tmpdir(), 'adk-native-tls-'))
  try {
    const copies = [1, 2, 3, 4].map((i) => {
      const file = join(dir, `copy${i}.node`)
      cpSync(built, file)
      return file
    })
    const script = `for (const f of ${JSON.stringify(copies)}) process.dlopen({ exports: {} }, f); console.log('loaded ${copies.length}')`
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' })
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /loaded 4/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
