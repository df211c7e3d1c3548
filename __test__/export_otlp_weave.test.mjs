// W&B Weave through TracingPlugin({ weave }): endpoint, auth and project
// headers, a Resource without entity/project, an API key that never shows up
// in a span or a warning; WANDB_API_KEY from the environment; the option
// combinations that are errors at construction.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { startReceiver } from './helpers/otlp_receiver.mjs'
import { PACKAGE_VERSION, TracingPlugin, cleanEnv, recordWarnings, runChild, runWeather, settle, weatherRunner } from './fixtures/otlp_common.mjs'

const WEAVE_PATH = '/agents/otel/v1/traces'
const KEY = 'k-secret-123'
const TOKEN = Buffer.from(`api:${KEY}`).toString('base64')

// Construction must not find a key in this process's environment.
delete process.env.WANDB_API_KEY

function allValues(obj) {
  return Object.values(obj).flatMap((v) => (Array.isArray(v) ? v : [v])).map(String)
}

describe('weave export', { concurrency: true }, () => {
  test('path, Basic auth, project_id, clean Resource; the key in no span and no warning (even when the collector echoes it)', async () => {
    // The first batch is refused with a body that echoes the credentials back.
    const rx = await startReceiver({
      path: WEAVE_PATH,
      script: [(rec) => ({ status: 400, body: `bad credentials: authorization=${rec.headers.authorization} token=${TOKEN} key=${KEY}` })],
    })
    const warnings = recordWarnings()
    try {
      const plugin = new TracingPlugin({
        weave: { project: 'entity/project', apiKey: KEY, baseUrl: `${rx.url}/` },
        batch: { scheduledDelayMillis: 60_000, exportTimeoutMillis: 5000 },
      })
      const runner = weatherRunner(plugin, { runs: 2 })
      await runWeather(runner, { text: 'Weather in Paris?' })
      await plugin.forceFlush()
      await runWeather(runner)
      await plugin.forceFlush()
      await settle()

      assert.deepEqual(rx.requests.map((r) => r.answer), [400, 200])
      for (const r of rx.requests) {
        assert.equal(r.error, undefined, r.error)
        assert.equal(r.path, WEAVE_PATH, 'baseUrl + /agents/otel/v1/traces, no double slash')
        assert.equal(r.headers.authorization, `Basic ${TOKEN}`)
        assert.equal(r.headers.project_id, 'entity/project')
        assert.equal(r.contentType, 'application/x-protobuf')
      }
      assert.equal(rx.spans.length, 5)
      assert.equal(plugin.droppedSpanCount, 5, 'the refused batch is counted')
      for (const r of rx.requests) {
        const resource = r.body.resourceSpans[0].resource.attributes
        assert.deepEqual(resource, {
          'service.name': 'unknown_service:node',
          'telemetry.sdk.name': 'adk-native-plugins',
          'telemetry.sdk.language': 'nodejs',
          'telemetry.sdk.version': PACKAGE_VERSION,
        }, 'entity/project travels as a header, not on the Resource')
      }
      for (const s of rx.allSpans) {
        for (const v of [...allValues(s.attributes), ...allValues(s.resource)]) {
          assert.ok(!v.includes(KEY) && !v.includes(TOKEN), `${s.name}: no key in ${v}`)
          assert.ok(!v.includes('entity/project'), `${s.name}: no entity/project in ${v}`)
        }
      }

      const w = warnings.export(rx.url)
      assert.equal(w.length, 1, JSON.stringify(warnings.list))
      assert.match(w[0].message, /HTTP 400/)
      assert.match(w[0].message, /bad credentials/, 'says what the collector answered')
      for (const { message } of warnings.list) {
        assert.ok(!message.includes(KEY), `the API key leaked into a warning: ${message}`)
        assert.ok(!message.includes(TOKEN), `the Basic token leaked into a warning: ${message}`)
      }
      await plugin.shutdown()
    } finally {
      warnings.stop()
      await rx.stop()
    }
  })

  test('a baseUrl with a path keeps it: <baseUrl>/agents/otel/v1/traces', async () => {
    const rx = await startReceiver({ path: `/proxy${WEAVE_PATH}` })
    try {
      const plugin = new TracingPlugin({
        weave: { project: 'team-a/agents', apiKey: 'other-key-789', baseUrl: `${rx.url}/proxy` },
        batch: { scheduledDelayMillis: 20 },
      })
      await runWeather(weatherRunner(plugin))
      await plugin.shutdown()
      assert.equal(rx.spans.length, 5)
      assert.equal(rx.requests[0].path, `/proxy${WEAVE_PATH}`)
      assert.equal(rx.requests[0].headers.project_id, 'team-a/agents')
      assert.equal(rx.requests[0].headers.authorization, `Basic ${Buffer.from('api:other-key-789').toString('base64')}`)
    } finally {
      await rx.stop()
    }
  })

  test('WANDB_API_KEY from the environment; weave beats the OTLP environment (child process)', async () => {
    const rx = await startReceiver({ path: WEAVE_PATH })
    const other = await startReceiver()
    try {
      const r = await runChild(
        'otlp_child.mjs',
        [JSON.stringify({ weave: { project: 'entity/project', baseUrl: rx.url }, batch: { scheduledDelayMillis: 20 } })],
        { env: cleanEnv({ WANDB_API_KEY: 'env-secret-456', OTEL_EXPORTER_OTLP_ENDPOINT: other.url }), timeoutMs: 30_000 },
      )
      assert.equal(r.code, 0, r.stderr)
      assert.equal(other.counts.requests, 0, 'OTEL_EXPORTER_OTLP_ENDPOINT is not used with weave')
      assert.equal(rx.spans.length, 5)
      for (const req of rx.requests) {
        assert.equal(req.path, WEAVE_PATH)
        assert.equal(req.headers.authorization, `Basic ${Buffer.from('api:env-secret-456').toString('base64')}`)
        assert.equal(req.headers.project_id, 'entity/project')
      }
      assert.deepEqual(r.json.warnings, [])
      assert.ok(!r.stdout.includes('env-secret-456') && !r.stderr.includes('env-secret-456'), 'the key is never printed')
    } finally {
      await rx.stop()
      await other.stop()
    }
  })

  test('construction errors: weave without a key, exporter other than otlp with endpoint/weave, endpoint with weave', () => {
    assert.throws(
      () => new TracingPlugin({ weave: { project: 'entity/project' } }),
      (err) => err instanceof Error && /WANDB_API_KEY/.test(err.message) && /apiKey/.test(err.message),
      'weave without a key says how to give one',
    )
    assert.throws(() => new TracingPlugin({ exporter: 'console', endpoint: 'http://127.0.0.1:4318/v1/traces' }), TypeError)
    assert.throws(() => new TracingPlugin({ exporter: 'memory', weave: { project: 'e/p', apiKey: KEY } }), TypeError)
    assert.throws(() => new TracingPlugin({ exporter: 'none', endpoint: 'http://127.0.0.1:4318/v1/traces' }), TypeError)
    assert.throws(
      () => new TracingPlugin({ endpoint: 'http://127.0.0.1:4318/v1/traces', weave: { project: 'e/p', apiKey: KEY } }),
      (err) => err instanceof TypeError && !err.message.includes(KEY),
    )
    // 'otlp' is the one exporter that goes with them.
    const ok = [
      new TracingPlugin({ exporter: 'otlp', endpoint: 'http://127.0.0.1:9/v1/traces' }),
      new TracingPlugin({ exporter: 'otlp', weave: { project: 'e/p', apiKey: KEY, baseUrl: 'http://127.0.0.1:9' } }),
    ]
    return Promise.all(ok.map((p) => p.shutdown()))
  })
})
