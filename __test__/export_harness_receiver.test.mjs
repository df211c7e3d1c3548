// Proves the OTLP receiver helper: real spans from the OpenTelemetry JS SDK's
// protobuf exporter are decoded faithfully, and the response script does what
// it says (status codes, Retry-After, hang, close).
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { gzipSync } from 'node:zlib'
import { context, trace } from '@opentelemetry/api'
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { decodeExportTraceServiceRequest, countSpans, startReceiver } from './helpers/otlp_receiver.mjs'

function sdk(endpoint, exporterOptions = {}) {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'harness', 'deployment.environment': 'test' }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: endpoint, timeoutMillis: 5000, ...exporterOptions }), {
        scheduledDelayMillis: 50,
      }),
    ],
  })
  return { provider, tracer: provider.getTracer('harness-scope', '1.2.3') }
}

/** Root → agent → (chat, tool); returns the SDK's own view of the ids. */
function makeTree(tracer) {
  const root = tracer.startSpan('invoke_agent root', {
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'root' },
  })
  const rootCtx = trace.setSpan(context.active(), root)
  const agent = tracer.startSpan('invoke_agent helper', {}, rootCtx)
  const agentCtx = trace.setSpan(context.active(), agent)
  const chat = tracer.startSpan('chat scripted-model', {
    attributes: {
      'gen_ai.request.model': 'scripted-model',
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.request.temperature': 0.25,
      'gen_ai.response.finish_reasons': ['stop'],
      'flag': true,
      'neg': -7,
      'big': 2 ** 40,
      'unicode': 'héllo ✓ 你好',
    },
  }, agentCtx)
  chat.end()
  const tool = tracer.startSpan('execute_tool lookup', { attributes: { 'gen_ai.tool.name': 'lookup' } }, agentCtx)
  tool.setStatus({ code: 2, message: 'tool failed' })
  tool.end()
  agent.end()
  root.end()
  const ids = (s) => s.spanContext()
  return { root: ids(root), agent: ids(agent), chat: ids(chat), tool: ids(tool) }
}

describe('otlp receiver with the OpenTelemetry JS exporter', () => {
  let rx
  before(async () => {
    rx = await startReceiver()
  })
  after(async () => {
    await rx.stop()
  })

  test('decodes names, ids, parents, attributes, status, resource and scope', async () => {
    rx.reset()
    const { provider, tracer } = sdk(rx.endpoint)
    const ids = makeTree(tracer)
    await provider.forceFlush()
    const spans = await rx.waitForSpans(4, 5000)
    await provider.shutdown()

    assert.equal(spans.length, 4)
    const req = rx.requests[0]
    assert.equal(req.method, 'POST')
    assert.equal(req.path, '/v1/traces')
    assert.equal(req.contentType, 'application/x-protobuf')
    assert.equal(req.answer, 200)

    const byName = Object.fromEntries(spans.map((s) => [s.name, s]))
    assert.deepEqual(Object.keys(byName).sort(), [
      'chat scripted-model', 'execute_tool lookup', 'invoke_agent helper', 'invoke_agent root',
    ])
    const root = byName['invoke_agent root']
    const agent = byName['invoke_agent helper']
    const chat = byName['chat scripted-model']
    const tool = byName['execute_tool lookup']

    assert.equal(root.traceId, ids.root.traceId)
    assert.match(root.traceId, /^[0-9a-f]{32}$/)
    assert.equal(root.spanId, ids.root.spanId)
    assert.match(root.spanId, /^[0-9a-f]{16}$/)
    assert.equal(root.parentSpanId, undefined)
    assert.equal(agent.parentSpanId, ids.root.spanId)
    assert.equal(chat.parentSpanId, ids.agent.spanId)
    assert.equal(tool.parentSpanId, ids.agent.spanId)
    assert.equal(chat.spanId, ids.chat.spanId)
    assert.equal(tool.spanId, ids.tool.spanId)
    for (const s of spans) assert.equal(s.traceId, ids.root.traceId)

    assert.deepEqual(chat.attributes, {
      'gen_ai.request.model': 'scripted-model',
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.request.temperature': 0.25,
      'gen_ai.response.finish_reasons': ['stop'],
      'flag': true,
      'neg': -7,
      'big': 2 ** 40,
      'unicode': 'héllo ✓ 你好',
    })
    assert.equal(root.attributes['gen_ai.agent.name'], 'root')
    assert.deepEqual(tool.status, { code: 2, message: 'tool failed' })
    assert.equal(root.status.code, 0)

    assert.equal(typeof root.startTimeUnixNano, 'bigint')
    assert.ok(root.startTimeUnixNano > 1_600_000_000_000_000_000n, 'a real epoch time in ns')
    assert.ok(root.endTimeUnixNano >= root.startTimeUnixNano)
    assert.ok(chat.startTimeUnixNano >= root.startTimeUnixNano)

    assert.equal(root.resource['service.name'], 'harness')
    assert.equal(root.resource['deployment.environment'], 'test')
    assert.deepEqual(root.scope, { name: 'harness-scope', version: '1.2.3' })
  })

  test('gunzips a gzip body', async () => {
    rx.reset()
    const { provider, tracer } = sdk(rx.endpoint, { compression: 'gzip' })
    makeTree(tracer)
    await provider.forceFlush()
    const spans = await rx.waitForSpans(4, 5000)
    await provider.shutdown()
    assert.equal(rx.requests[0].contentEncoding, 'gzip')
    assert.equal(spans.length, 4)
    assert.ok(spans.some((s) => s.name === 'execute_tool lookup'))
  })

  test('503 then 200: the JS exporter retries and the batch is accepted once', async () => {
    rx.reset()
    rx.script.push(503, 200)
    const { provider, tracer } = sdk(rx.endpoint)
    const ids = makeTree(tracer)
    await provider.forceFlush()
    await rx.waitForSpans(4, 8000)
    await provider.shutdown()
    assert.deepEqual(rx.requests.map((r) => r.answer), [503, 200])
    assert.equal(rx.counts.spansReceived, 8, 'the same batch arrived twice')
    assert.equal(rx.spans.length, 4, 'only the accepted copy counts')
    assert.deepEqual(rx.requests[0].body, rx.requests[1].body, 'the retry carried the same batch')
    assert.ok(rx.spans.some((s) => s.spanId === ids.tool.spanId))
  })
})

describe('otlp receiver script and edge cases', () => {
  /** A valid one-span request body. */
  function oneSpanBody() {
    // Minimal hand-encoded ExportTraceServiceRequest: resource_spans { scope_spans { spans { trace_id, span_id, name } } }
    const traceId = Buffer.from('0102030405060708090a0b0c0d0e0f10', 'hex')
    const spanId = Buffer.from('a1a2a3a4a5a6a7a8', 'hex')
    const name = Buffer.from('hand-made')
    const spanMsg = Buffer.concat([
      Buffer.from([0x0a, 16]), traceId,
      Buffer.from([0x12, 8]), spanId,
      Buffer.from([0x2a, name.length]), name,
    ])
    const scopeSpans = Buffer.concat([Buffer.from([0x12, spanMsg.length]), spanMsg])
    const resourceSpans = Buffer.concat([Buffer.from([0x12, scopeSpans.length]), scopeSpans])
    return Buffer.concat([Buffer.from([0x0a, resourceSpans.length]), resourceSpans])
  }
  const post = (url, body = oneSpanBody(), headers = {}, signal) =>
    fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/x-protobuf', ...headers }, signal })

  test('status codes, Retry-After, function entries and the fallback', async () => {
    const rx = await startReceiver({
      script: [
        503,
        { status: 429, headers: { 'retry-after': '2' } },
        (rec) => (rec.spanCount === 1 ? 502 : 500),
      ],
    })
    try {
      assert.equal((await post(rx.endpoint)).status, 503)
      const r429 = await post(rx.endpoint)
      assert.equal(r429.status, 429)
      assert.equal(r429.headers.get('retry-after'), '2')
      assert.equal((await post(rx.endpoint)).status, 502)
      const ok = await post(rx.endpoint)
      assert.equal(ok.status, 200)
      assert.equal(ok.headers.get('content-type'), 'application/x-protobuf')
      assert.equal((await ok.arrayBuffer()).byteLength, 0)
      assert.deepEqual(rx.requests.map((r) => r.answer), [503, 429, 502, 200])
      assert.equal(rx.counts.spansReceived, 4)
      assert.equal(rx.spans.length, 1)
      assert.equal(rx.spans[0].name, 'hand-made')
      assert.equal(rx.spans[0].traceId, '0102030405060708090a0b0c0d0e0f10')
      assert.equal(rx.spans[0].spanId, 'a1a2a3a4a5a6a7a8')
      assert.equal(rx.spans[0].parentSpanId, undefined)
    } finally {
      await rx.stop()
    }
  })

  test('gzip sent by hand, wrong path, JSON content type, garbage body', async () => {
    const rx = await startReceiver()
    try {
      assert.equal((await post(rx.endpoint, gzipSync(oneSpanBody()), { 'content-encoding': 'gzip' })).status, 200)
      assert.equal((await post(`${rx.url}/v1/logs`)).status, 404)
      assert.equal((await post(rx.endpoint, '{}', { 'content-type': 'application/json' })).status, 415)
      assert.equal((await post(rx.endpoint, Buffer.from([0x0a, 0x05, 0x01]))).status, 400)
      assert.deepEqual(rx.requests.map((r) => r.answer), [200, 404, 415, 400])
      assert.match(rx.requests[3].error, /undecodable/)
      assert.equal(rx.spans.length, 1)
    } finally {
      await rx.stop()
    }
  })

  test('hang never answers until stop; close drops the connection', async () => {
    const rx = await startReceiver({ script: ['close', 'hang'] })
    await assert.rejects(post(rx.endpoint), /fetch failed/)
    const t0 = performance.now()
    await assert.rejects(post(rx.endpoint, undefined, {}, AbortSignal.timeout(300)), /abort|timeout/i)
    assert.ok(performance.now() - t0 >= 250, 'the hang held the request')
    assert.deepEqual(rx.requests.map((r) => r.answer), ['close', 'hang'])
    assert.equal((await post(rx.endpoint)).status, 200, 'script used up: fallback')
    assert.equal(rx.requests[2].answer, 200)
    const rx2 = await startReceiver({ script: ['hang'] })
    const pending = post(rx2.endpoint).then(() => 'answered', () => 'dropped')
    await rx2.waitForRequests(1, 30_000)
    const t1 = performance.now()
    await rx2.stop()
    assert.equal(await pending, 'dropped', 'stop() ends a hanging request')
    assert.ok(performance.now() - t1 < 2000, 'stop() does not wait for the hang')
    await rx.stop()
  })

  test('waitForSpans times out with a clear message', async () => {
    const rx = await startReceiver()
    try {
      await assert.rejects(rx.waitForSpans(1, 100), /0 spans accepted .* expected 1 within 100 ms/)
    } finally {
      await rx.stop()
    }
  })
})

describe('protobuf decoder', () => {
  // A tiny encoder for the cases the OTel SDK never produces (int64 beyond 2^53, kvlist, bytes).
  const varint = (n) => {
    let v = BigInt.asUintN(64, BigInt(n))
    const out = []
    do {
      let b = Number(v & 0x7fn)
      v >>= 7n
      if (v) b |= 0x80
      out.push(b)
    } while (v)
    return Buffer.from(out)
  }
  const ld = (field, payload) => Buffer.concat([varint(field * 8 + 2), varint(payload.length), payload])
  const str = (field, s) => ld(field, Buffer.from(s))
  const kv = (key, anyValue) => ld(9, Buffer.concat([str(1, key), ld(2, anyValue)]))

  test('int64 extremes, kvlist, bytes, array of mixed values, unknown fields skipped', () => {
    const fixed64 = (field, n) => {
      const b = Buffer.alloc(8)
      b.writeBigUInt64LE(n)
      return Buffer.concat([varint(field * 8 + 1), b])
    }
    const double = Buffer.alloc(8)
    double.writeDoubleLE(-1.5)
    const span = Buffer.concat([
      ld(1, Buffer.alloc(16, 0xab)),
      ld(2, Buffer.alloc(8, 0xcd)),
      ld(4, Buffer.alloc(8, 0xef)),
      str(5, 'edge'),
      varint(6 * 8), varint(3), // kind = CLIENT
      fixed64(7, 1_700_000_000_123_456_789n),
      fixed64(8, 1_700_000_000_223_456_789n),
      kv('max', Buffer.concat([varint(3 * 8), varint(9223372036854775807n)])),
      kv('minus', Buffer.concat([varint(3 * 8), varint(-2n)])),
      kv('kv', ld(6, ld(1, Buffer.concat([str(1, 'inner'), ld(2, str(1, 'x'))])))),
      kv('raw', ld(7, Buffer.from([1, 2, 3]))),
      kv('mixed', ld(5, Buffer.concat([ld(1, str(1, 'a')), ld(1, Buffer.concat([varint(2 * 8), varint(1)])), ld(1, Buffer.concat([varint(4 * 8 + 1), double]))]))),
      varint(99 * 8), varint(5), // unknown varint field
      ld(15, Buffer.concat([str(2, 'bad'), varint(3 * 8), varint(2)])),
    ])
    const body = ld(1, ld(2, ld(2, span)))
    const decoded = decodeExportTraceServiceRequest(body)
    const s = decoded.resourceSpans[0].scopeSpans[0].spans[0]
    assert.equal(s.traceId, 'ab'.repeat(16))
    assert.equal(s.spanId, 'cd'.repeat(8))
    assert.equal(s.parentSpanId, 'ef'.repeat(8))
    assert.equal(s.name, 'edge')
    assert.equal(s.kind, 3)
    assert.equal(s.startTimeUnixNano, 1_700_000_000_123_456_789n)
    assert.equal(s.endTimeUnixNano, 1_700_000_000_223_456_789n)
    assert.equal(s.attributes.max, 9223372036854775807n)
    assert.equal(s.attributes.minus, -2)
    assert.deepEqual(s.attributes.kv, { inner: 'x' })
    assert.deepEqual(s.attributes.raw, Uint8Array.from([1, 2, 3]))
    assert.deepEqual(s.attributes.mixed, ['a', true, -1.5])
    assert.deepEqual(s.status, { code: 2, message: 'bad' })
    assert.equal(countSpans(body), 1)
    const seen = []
    countSpans(body, (id) => seen.push(id))
    assert.deepEqual(seen, ['cd'.repeat(8)])
  })

  test('truncated input throws instead of returning half a span', () => {
    const body = ld(1, ld(2, ld(2, str(5, 'x'))))
    assert.throws(() => decodeExportTraceServiceRequest(body.subarray(0, body.length - 1)), /truncated/)
  })
})
