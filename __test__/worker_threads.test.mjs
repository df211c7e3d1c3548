// The package in worker threads: a worker may be the first to load it after
// an earlier one ended (worker pools, test runners), and the process must
// go on. With mimalloc 3.3's allocator the second worker to load the addon
// crashed the whole process (SIGSEGV in module registration); see Cargo.toml.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

test('workers loading the package one after another, never the main thread: each runs, the process lives', () => {
  const fixture = fileURLToPath(new URL('./fixtures/workers_in_turn.mjs', import.meta.url))
  const r = spawnSync(process.execPath, [fixture], { encoding: 'utf8', timeout: 60_000 })
  assert.equal(r.signal, null, `killed by ${r.signal}: ${r.stderr.slice(-500)}`)
  assert.equal(r.status, 0, r.stderr.slice(-500))
  const reports = r.stdout.trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l))
  assert.deepEqual(reports, [0, 1, 2].map((worker) => ({ worker, spans: 5, open: 0 })))
})
