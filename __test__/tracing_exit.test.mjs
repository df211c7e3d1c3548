// The process-wide exit path: dangling invocations are finished as
// interrupted and handed to the exporter, on process.exit() and on a natural
// end of the event loop.
import test from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const fixture = fileURLToPath(new URL('./fixtures/tracing_exit.mjs', import.meta.url))

function childEnv() {
  const env = { ...process.env }
  delete env.NODE_TEST_CONTEXT // the child is a plain script, not a test file
  return env
}

for (const how of ['exit', 'natural']) {
  test(`dangling spans are exported on ${how === 'exit' ? 'process.exit()' : 'a natural exit'}`, () => {
    const r = spawnSync(process.execPath, [fixture, how], { encoding: 'utf8', env: childEnv() })
    assert.equal(r.status, 0, r.stderr)
    const out = r.stdout
    assert.match(out, /OPEN 1/)
    // The run was still open at the break, so its root span can only have
    // been exported by the exit path.
    assert.match(out, /invoke_agent exitagent/, 'the root span was exported')
  })
}
