// The published main package holds only what users need: the entry points, their
// types, napi's loader and lib/. No tests, benchmarks, scripts, Rust sources,
// caches or binaries (those ship in the per-platform packages), and no script
// that would build anything when a user installs it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const repo = fileURLToPath(new URL('..', import.meta.url))
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

function packedFiles() {
  const r = spawnSync(npm, ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: repo, encoding: 'utf8', shell: process.platform === 'win32' })
  assert.equal(r.status, 0, r.stderr)
  const [info] = JSON.parse(r.stdout)
  return info
}

test('npm pack holds exactly the runtime files', (t) => {
  const info = packedFiles()
  const files = info.files.map((f) => f.path).sort()
  t.diagnostic(`${info.filename}: ${info.size} bytes packed, ${info.unpackedSize} unpacked, ${files.length} files`)
  const allowed = [
    /^package\.json$/, /^README\.md$/, /^LICENSE$/,
    /^index\.js$/, /^index\.d\.ts$/, /^binding\.js$/, /^binding\.d\.ts$/,
    /^lib\/[\w/-]+\.js$/,
  ]
  const unexpected = files.filter((f) => !allowed.some((re) => re.test(f)))
  assert.deepEqual(unexpected, [], 'files that users do not need')
  for (const required of ['package.json', 'README.md', 'index.js', 'index.d.ts', 'binding.js', 'binding.d.ts', 'lib/native.js', 'lib/retry.js', 'lib/tracing.js', 'lib/run_guarded.js', 'lib/plugin_shell.js']) {
    assert.ok(files.includes(required), `${required} is packed`)
  }
  // Every module our JS loads is packed (a relative require of an unpacked file would break
  // installs). binding.js is skipped: napi's loader tries a local .node for every platform.
  for (const f of files.filter((p) => p.endsWith('.js') && p !== 'binding.js')) {
    for (const [, dep] of readFileSync(`${repo}/${f}`, 'utf8').matchAll(/require\('(\.{1,2}\/[^']+)'\)/g)) {
      const target = new URL(dep, `file:///${f}`).pathname.slice(1)
      assert.ok(files.includes(target), `${f} requires ${dep}, which is not packed`)
    }
  }
})

test('no lifecycle script builds anything at install', () => {
  const { scripts = {} } = JSON.parse(readFileSync(`${repo}/package.json`, 'utf8'))
  for (const s of ['preinstall', 'install', 'postinstall', 'prepare', 'prepack']) {
    assert.equal(scripts[s], undefined, `package.json has a ${s} script`)
  }
})
