// Configuration through the standard OpenTelemetry environment, each case in
// a child process with exactly the variables it names (the receiver lives in
// this process, so the children are spawned asynchronously).
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { startReceiver } from './helpers/otlp_receiver.mjs'
import { PACKAGE_VERSION, cleanEnv, runChild, sleep } from './fixtures/otlp_common.mjs'
import { margin } from './helpers/timing.mjs'

const FAST = { scheduledDelayMillis: 20, exportTimeoutMillis: 5000 }

/** Runs the child with `env` and plugin `options`; asserts it ended well. */
async function child(env, options = { batch: FAST }) {
  const r = await runChild('otlp_child.mjs', [JSON.stringify(options)], { env: cleanEnv(env), timeoutMs: 30_000 })
  assert.equal(r.code, 0, `child failed:\n${r.stderr}`)
  assert.ok(r.json, `no RESULT line:\n${r.stdout}\n${r.stderr}`)
  return r.json
}

async function withReceiver(opts, fn) {
  const rx = await startReceiver(opts)
  try {
    return await fn(rx)
  } finally {
    await rx.stop()
  }
}

function assertDelivered(rx, path) {
  assert.equal(rx.spans.length, 5, `five spans accepted (requests: ${JSON.stringify(rx.requests.map((r) => [r.path, r.answer, r.error]))})`)
  for (const r of rx.requests) {
    assert.equal(r.path, path)
    assert.equal(r.answer, 200)
  }
}

describe('configuration from the environment (child processes)', { concurrency: 2 }, () => {
  test('OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/traces), OTEL_EXPORTER_OTLP_HEADERS (URL-decoded), OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES', () =>
    withReceiver({}, async (rx) => {
      const out = await child({
        OTEL_EXPORTER_OTLP_ENDPOINT: rx.url,
        OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=abc%20def%3D%3D, x-tenant=t1',
        OTEL_SERVICE_NAME: 'svc-from-env',
        OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attrs,deployment.environment=staging,team=a%2Cb',
      })
      assertDelivered(rx, '/v1/traces')
      for (const r of rx.requests) {
        assert.equal(r.headers['x-api-key'], 'abc def==')
        assert.equal(r.headers['x-tenant'], 't1')
        assert.equal(r.contentEncoding, undefined, 'a loopback collector: uncompressed by default')
      }
      assert.deepEqual(rx.requests[0].body.resourceSpans[0].resource.attributes, {
        'service.name': 'svc-from-env',
        'telemetry.sdk.name': 'adk-native-plugins',
        'telemetry.sdk.language': 'nodejs',
        'telemetry.sdk.version': PACKAGE_VERSION,
        'deployment.environment': 'staging',
        team: 'a,b',
      })
      assert.equal(out.dropped, 0)
      assert.deepEqual(out.warnings, [])
    }))

  test('OTEL_EXPORTER_OTLP_ENDPOINT with a trailing slash never doubles it; no OTEL_SERVICE_NAME: unknown_service:node; COMPRESSION=gzip; OTEL_BSP_MAX_EXPORT_BATCH_SIZE', () =>
    withReceiver({}, async (rx) => {
      await child({ OTEL_EXPORTER_OTLP_ENDPOINT: `${rx.url}/`, OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2' })
      assertDelivered(rx, '/v1/traces')
      assert.ok(rx.requests.every((r) => r.spanCount <= 2), `OTEL_BSP_MAX_EXPORT_BATCH_SIZE=2: ${rx.requests.map((r) => r.spanCount)}`)
      assert.equal(rx.spans[0].resource['service.name'], 'unknown_service:node')
      assert.ok(rx.requests.every((r) => r.contentEncoding === 'gzip'), 'gzip, as asked, to a loopback collector too')
    }))

  test('OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT beats OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: every string value arrives cut to it, in characters', () =>
    withReceiver({}, async (rx) => {
      const out = await child({ OTEL_EXPORTER_OTLP_ENDPOINT: rx.url, OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT: '6', OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '100' })
      assertDelivered(rx, '/v1/traces')
      let long = 0
      for (const span of rx.spans) {
        for (const [key, value] of Object.entries(span.attributes)) {
          for (const v of [value].flat()) {
            if (typeof v !== 'string') continue
            assert.ok([...v].length <= 6, `${span.name} ${key} = ${JSON.stringify(v)}`)
            if ([...v].length === 6) long++
          }
        }
      }
      assert.ok(long > 10, `values at the limit: ${long}`)
      assert.ok(rx.spans.every((s) => s.attributes['gen_ai.operation.name'].length <= 6))
      assert.ok(rx.spans.some((s) => s.attributes['gen_ai.operation.name'] === 'invoke'))
      assert.deepEqual(out.warnings, [])
    }))

  test('OTEL_EXPORTER_OTLP_ENDPOINT with a base path (and trailing slash): <base>/v1/traces', () =>
    withReceiver({ path: '/otlp/v1/traces' }, async (rx) => {
      await child({ OTEL_EXPORTER_OTLP_ENDPOINT: `${rx.url}/otlp/` })
      assertDelivered(rx, '/otlp/v1/traces')
    }))

  test('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is used verbatim and beats OTEL_EXPORTER_OTLP_ENDPOINT', () =>
    withReceiver({ path: '/custom/traces' }, (rx) =>
      withReceiver({}, async (other) => {
        await child({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${rx.url}/custom/traces`, OTEL_EXPORTER_OTLP_ENDPOINT: other.url })
        assertDelivered(rx, '/custom/traces')
        assert.equal(other.counts.requests, 0, 'the generic endpoint got nothing')
      })))

  test('the endpoint option beats the environment\'s endpoints; OTEL_EXPORTER_OTLP_HEADERS still apply', () =>
    withReceiver({}, (rx) =>
      withReceiver({}, async (other) => {
        await child(
          { OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=env-key', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: other.endpoint, OTEL_EXPORTER_OTLP_ENDPOINT: other.url },
          { endpoint: rx.endpoint, batch: FAST },
        )
        assertDelivered(rx, '/v1/traces')
        assert.equal(rx.requests[0].headers['x-api-key'], 'env-key')
        assert.equal(other.counts.requests, 0, 'the environment\'s collector got nothing')
      })))

  test('the headers option replaces OTEL_EXPORTER_OTLP_HEADERS; serviceName and resourceAttributes beat the environment key by key', () =>
    withReceiver({}, async (rx) => {
      await child(
        {
          OTEL_EXPORTER_OTLP_ENDPOINT: rx.url,
          OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=env-key,x-tenant=t1',
          OTEL_SERVICE_NAME: 'svc-from-env',
          OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=staging,team=env',
        },
        { headers: { 'x-other': 'o' }, serviceName: 'svc-option', resourceAttributes: { team: 'option' }, batch: FAST },
      )
      assertDelivered(rx, '/v1/traces')
      for (const r of rx.requests) {
        assert.equal(r.headers['x-other'], 'o')
        assert.equal(r.headers['x-api-key'], undefined, 'the environment\'s headers are replaced, not merged')
        assert.equal(r.headers['x-tenant'], undefined)
      }
      const resource = rx.requests[0].body.resourceSpans[0].resource.attributes
      assert.equal(resource['service.name'], 'svc-option')
      assert.equal(resource.team, 'option')
      assert.equal(resource['deployment.environment'], 'staging')
    }))

  test('OTEL_EXPORTER_OTLP_TIMEOUT bounds each batch export, retries included, within exportTimeoutMillis', () =>
    withReceiver({ script: ['hang', 'hang'], fallback: 503 }, async (rx) => {
      // Only the child's forceFlush exports, so the five spans go in one batch however slow the
      // run (a 20 ms schedule split them on a loaded machine, and another request came).
      const batch = { scheduledDelayMillis: 600_000, exportTimeoutMillis: 8000 }
      const out = await child({ OTEL_EXPORTER_OTLP_TIMEOUT: '1500' }, { endpoint: rx.endpoint, batch })
      // The OpenTelemetry specification: the most the exporter waits for each batch export.
      // The hung attempt is cut at 1.5 s and no retry fits in what is left of it; without
      // the variable the batch would have been retried for the whole 8 s.
      assert.deepEqual(rx.requests.map((r) => r.answer), ['hang'])
      assert.equal(out.dropped, 5)
      const w = out.warnings.filter((x) => x.code === 'ADK_TRACING_EXPORT')
      assert.equal(w.length, 1, JSON.stringify(out.warnings))
      assert.match(w[0].message, /within OTEL_EXPORTER_OTLP_TIMEOUT \(1500 ms, 1 attempt;/)
    }))

  test('OTEL_TRACES_EXPORTER=console,otlp: every span is printed and sent', () =>
    withReceiver({}, async (rx) => {
      const r = await runChild('otlp_child.mjs', [JSON.stringify({ batch: FAST })], {
        env: cleanEnv({ OTEL_TRACES_EXPORTER: 'otlp , console', OTEL_EXPORTER_OTLP_ENDPOINT: rx.url, NO_COLOR: '1' }),
        timeoutMs: 30_000,
      })
      assert.equal(r.code, 0, `child failed:\n${r.stderr}`)
      assertDelivered(rx, '/v1/traces')
      for (const span of rx.spans) assert.ok(r.stdout.includes(span.name), `printed: ${span.name}\n${r.stdout}`)
      assert.deepEqual(r.json.warnings, [])
    }))

  test('OTEL_TRACES_EXPORTER=none: nothing is sent, nothing warned', () =>
    withReceiver({}, async (rx) => {
      const out = await child({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: rx.url })
      await sleep(100)
      assert.equal(rx.counts.requests, 0)
      assert.deepEqual(out.warnings, [])
    }))

  // One test holds the OTLP default port for all three children.
  test('nothing configured: one warning that says how, nothing sent; exporter \'otlp\' or OTEL_TRACES_EXPORTER=otlp alone: http://localhost:4318/v1/traces', async (t) => {
    let rx
    try {
      rx = await startReceiver({ port: 4318 })
    } catch {
      t.diagnostic('port 4318 is taken here: the default endpoint is not checked')
    }
    try {
      const out = await child({}, { batch: FAST })
      await sleep(100)
      if (rx) assert.equal(rx.counts.requests, 0, 'nothing sent to the default endpoint')
      assert.equal(out.warnings.length, 1, JSON.stringify(out.warnings))
      const [w] = out.warnings
      assert.equal(w.code, 'ADK_TRACING_NO_EXPORTER')
      assert.match(w.message, /no exporter is configured/)
      assert.match(w.message, /endpoint/)
      assert.match(w.message, /OTEL_EXPORTER_OTLP_ENDPOINT/)
      assert.equal(out.dropped, 0)
      if (!rx) return

      const explicit = await child({}, { exporter: 'otlp', batch: FAST })
      assert.deepEqual(explicit.warnings, [])
      assert.equal(rx.spans.length, 5, 'exporter: \'otlp\' alone sends to the default endpoint')
      assert.ok(rx.requests.every((r) => r.path === '/v1/traces'))
      rx.reset()
      const fromEnv = await child({ OTEL_TRACES_EXPORTER: 'otlp' })
      assert.deepEqual(fromEnv.warnings, [])
      assert.equal(rx.spans.length, 5, 'OTEL_TRACES_EXPORTER=otlp alone sends to the default endpoint')
    } finally {
      await rx?.stop()
    }
  })
})
