// OTLP export through TracingPlugin and a real InMemoryRunner, to the
// loopback receiver: what arrives (path, content type, gzip, Resource, the
// span tree with its GenAI attributes) and what shutdown() promises.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { readdirSync, readFileSync } from 'node:fs'
import { startReceiver } from './helpers/otlp_receiver.mjs'
import { PACKAGE_VERSION, TracingPlugin, WEATHER_SPAN_NAMES, concurrentWeatherRunner, runWeather, sleep, weatherRunner } from './fixtures/otlp_common.mjs'

// Only this file's process: the default service.name must come from nowhere.
delete process.env.OTEL_SERVICE_NAME
delete process.env.OTEL_RESOURCE_ATTRIBUTES

function byTrace(spans) {
  const out = new Map()
  for (const s of spans) {
    if (!out.has(s.traceId)) out.set(s.traceId, [])
    out.get(s.traceId).push(s)
  }
  return out
}

/** One run's spans: root → agent → (chat, tool, chat), every parent in the trace. */
function assertRunTree(spans, { invocationId, sessionId }) {
  assert.deepEqual(spans.map((s) => s.name).sort(), WEATHER_SPAN_NAMES)
  const ids = new Set(spans.map((s) => s.spanId))
  assert.equal(ids.size, 5, 'distinct span ids')
  const roots = spans.filter((s) => s.parentSpanId === undefined)
  assert.equal(roots.length, 1, 'one root')
  const root = roots[0]
  assert.equal(root.name, 'invoke_agent weather_agent')
  for (const s of spans) if (s !== root) assert.ok(ids.has(s.parentSpanId), `${s.name}: parent inside the trace`)
  const agent = spans.find((s) => s.parentSpanId === root.spanId)
  assert.equal(agent.name, 'invoke_agent weather_agent')
  const children = spans.filter((s) => s.parentSpanId === agent.spanId).map((s) => s.name).sort()
  assert.deepEqual(children, ['chat scripted-model', 'chat scripted-model', 'execute_tool lookup'])

  for (const s of spans) {
    assert.match(s.traceId, /^[0-9a-f]{32}$/)
    assert.match(s.spanId, /^[0-9a-f]{16}$/)
    assert.ok(s.endTimeUnixNano >= s.startTimeUnixNano, `${s.name}: ends after it starts`)
    assert.ok(s.startTimeUnixNano > 1_600_000_000_000_000_000n, `${s.name}: a wall-clock start time`)
    assert.equal(s.attributes['gen_ai.provider.name'], 'gemini')
    assert.equal(s.attributes['gen_ai.conversation.id'], sessionId)
    assert.equal(s.status.code, 0, `${s.name}: status UNSET`)
  }
  assert.equal(root.attributes['gen_ai.operation.name'], 'invoke_agent')
  assert.equal(root.attributes['gen_ai.agent.name'], 'weather_agent')
  assert.equal(root.attributes['gen_ai.agent.id'], invocationId)
  assert.equal(root.attributes['weave.google_adk.invocation_id'], invocationId)
  assert.equal(root.attributes['weave.google_adk.app_name'], 'otlp-e2e')
  assert.equal(root.attributes['weave.google_adk.user_id'], 'u')
  assert.equal(root.attributes['weave.google_adk.interrupted'], undefined, 'a drained run is not interrupted')
  assert.match(root.attributes['gen_ai.output.messages'], /Sunny in Paris/)
  assert.equal(agent.attributes['gen_ai.agent.description'], 'Answers weather.')
  for (const chat of spans.filter((s) => s.name === 'chat scripted-model')) {
    assert.equal(chat.attributes['gen_ai.operation.name'], 'chat')
    assert.equal(chat.attributes['gen_ai.request.model'], 'scripted-model')
    assert.equal(chat.attributes['gen_ai.agent.name'], 'weather_agent')
    assert.match(chat.attributes['gen_ai.tool.definitions'], /"lookup"/)
  }
  const tool = spans.find((s) => s.name === 'execute_tool lookup')
  assert.equal(tool.attributes['gen_ai.operation.name'], 'execute_tool')
  assert.equal(tool.attributes['gen_ai.tool.name'], 'lookup')
  assert.match(tool.attributes['gen_ai.tool.call.arguments'], /Paris/)
  assert.match(tool.attributes['gen_ai.tool.call.result'], /sunny/)
}

test('delivery: path verbatim, protobuf, uncompressed to a loopback collector, Resource, one trace per invocation with the GenAI span tree', async () => {
  const path = '/custom/prefix/v1/traces'
  const rx = await startReceiver({ path })
  try {
    const plugin = new TracingPlugin({
      endpoint: `${rx.url}${path}?tenant=a%20b`,
      serviceName: 'delivery-e2e',
      resourceAttributes: { 'deployment.environment': 'test', 'team.name': 'tracing' },
      batch: { scheduledDelayMillis: 20, exportTimeoutMillis: 5000 },
    })
    const runner = weatherRunner(plugin, { runs: 2 })
    const first = await runWeather(runner)
    const second = await runWeather(runner)
    await plugin.forceFlush()
    // forceFlush resolves once everything ended so far was answered.
    assert.equal(rx.counts.spansAccepted, 10, 'all ten spans were answered when forceFlush resolved')

    assert.ok(rx.requests.length >= 1)
    for (const r of rx.requests) {
      assert.equal(r.error, undefined, r.error)
      assert.equal(r.method, 'POST')
      assert.equal(r.path, `${path}?tenant=a%20b`, 'the endpoint is used verbatim, query included')
      assert.equal(r.contentType, 'application/x-protobuf')
      assert.equal(r.contentEncoding, undefined, 'no gzip over loopback unless asked for')
      assert.equal(r.answer, 200)
      assert.equal(r.body.resourceSpans.length, 1, 'one ResourceSpans per request')
      const resource = r.body.resourceSpans[0].resource.attributes
      assert.deepEqual(resource, {
        'service.name': 'delivery-e2e',
        'telemetry.sdk.name': 'adk-native-plugins',
        'telemetry.sdk.language': 'nodejs',
        'telemetry.sdk.version': PACKAGE_VERSION,
        'deployment.environment': 'test',
        'team.name': 'tracing',
      })
    }
    const traces = byTrace(rx.spans)
    assert.equal(traces.size, 2, 'one trace id per invocation')
    const runs = [...traces.values()]
    const rootOf = (spans) => spans.find((s) => s.parentSpanId === undefined)
    for (const run of [first, second]) {
      const spans = runs.find((t) => rootOf(t)?.attributes['gen_ai.agent.id'] === run.invocationId)
      assert.ok(spans, `a trace for invocation ${run.invocationId}`)
      assertRunTree(spans, run)
    }
    assert.equal(plugin.droppedSpanCount, 0)
    await plugin.shutdown()
  } finally {
    await rx.stop()
  }
})

test('delivery: service.name defaults to unknown_service:node; resourceAttributes cannot override telemetry.sdk.*', async () => {
  const rx = await startReceiver()
  try {
    const plugin = new TracingPlugin({
      endpoint: rx.endpoint,
      resourceAttributes: { 'telemetry.sdk.name': 'spoofed', 'telemetry.sdk.language': 'rust', 'host.name': 'box-1' },
      batch: { scheduledDelayMillis: 20 },
    })
    await runWeather(weatherRunner(plugin))
    await plugin.shutdown()
    assert.equal(rx.spans.length, 5)
    const resource = rx.spans[0].resource
    assert.equal(resource['service.name'], 'unknown_service:node')
    assert.equal(resource['telemetry.sdk.name'], 'adk-native-plugins')
    assert.equal(resource['telemetry.sdk.language'], 'nodejs')
    assert.equal(resource['telemetry.sdk.version'], PACKAGE_VERSION)
    assert.equal(resource['host.name'], 'box-1')
    assert.equal(rx.spans[0].scope.name, 'adk-native-plugins')
  } finally {
    await rx.stop()
  }
})

test('shutdown(): resolves after delivery, later callbacks are no-ops, idempotent', async () => {
  const rx = await startReceiver()
  try {
    // A long schedule: only shutdown() can have sent the spans.
    const plugin = new TracingPlugin({ endpoint: rx.endpoint, batch: { scheduledDelayMillis: 60_000, exportTimeoutMillis: 5000 } })
    const runner = weatherRunner(plugin, { runs: 3 })
    await runWeather(runner)
    // A second run left open (consumer break): shutdown finishes it as interrupted.
    const open = await runWeather(runner, { breakEarly: true })
    assert.equal(plugin.openInvocationCount, 1)
    await sleep(100)
    assert.equal(rx.counts.requests, 0, 'nothing sent before the schedule or a flush')

    const p1 = plugin.shutdown()
    const p2 = plugin.shutdown()
    await Promise.all([p1, p2])
    assert.equal(rx.counts.requests > 0, true, 'shutdown sent the spans')
    const delivered = rx.counts.spansAccepted
    assert.equal(plugin.openInvocationCount, 0, 'shutdown finished the open invocation')
    const openRoot = rx.spans.find((s) => s.parentSpanId === undefined && s.attributes['gen_ai.agent.id'] === open.invocationId)
    assert.ok(openRoot, 'the interrupted run\'s root was delivered before shutdown resolved')
    assert.equal(openRoot.attributes['weave.google_adk.interrupted'], true)
    assert.equal(rx.spans.filter((s) => s.parentSpanId === undefined).length, 2, 'both roots delivered')

    // After shutdown: a full run traces nothing, flushing sends nothing.
    const after = await runWeather(runner)
    assert.ok(after.invocationId, 'the run itself still works')
    assert.equal(plugin.openInvocationCount, 0)
    await plugin.forceFlush()
    await plugin.shutdown()
    await sleep(150)
    assert.equal(rx.counts.spansAccepted, delivered, 'no span after shutdown')
    assert.equal(rx.spans.some((s) => s.attributes['gen_ai.agent.id'] === after.invocationId), false)
    assert.equal(plugin.droppedSpanCount, 0)
  } finally {
    await rx.stop()
  }
})

test('delivery: big and non-ASCII attribute values survive protobuf + gzip; user headers cannot replace the body\'s own', async () => {
  const rx = await startReceiver()
  try {
    // gzip to this loopback collector only because the environment asks for
    // it (read when the plugin is made).
    process.env.OTEL_EXPORTER_OTLP_COMPRESSION = 'gzip'
    let plugin
    try {
      plugin = new TracingPlugin({
        endpoint: rx.endpoint,
        headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'identity', 'x-team': 'team-1' },
        batch: { scheduledDelayMillis: 20 },
      })
    } finally {
      delete process.env.OTEL_EXPORTER_OTLP_COMPRESSION
    }
    const big = 'Wetter in Köln? 🌦 ' + 'x'.repeat(1_500_000)
    const runner = weatherRunner(plugin)
    const run = await runWeather(runner, { text: big })
    await plugin.shutdown()
    assert.equal(rx.spans.length, 5, JSON.stringify(rx.requests.map((r) => [r.answer, r.error])))
    for (const r of rx.requests) {
      assert.equal(r.contentType, 'application/x-protobuf')
      assert.equal(r.contentEncoding, 'gzip')
      assert.equal(r.headers['x-team'], 'team-1')
      assert.ok(r.bytes < 200_000, `gzip shrank the body: ${r.bytes} bytes`)
    }
    const root = rx.spans.find((s) => s.parentSpanId === undefined)
    assert.equal(root.attributes['gen_ai.agent.id'], run.invocationId)
    const input = JSON.parse(root.attributes['gen_ai.input.messages'])
    assert.equal(input[0].parts[0].content, big, 'the user text, byte for byte')
  } finally {
    await rx.stop()
  }
})

test('delivery: 20 concurrent runs, 20 traces, each with its own complete tree', async () => {
  const rx = await startReceiver()
  try {
    const plugin = new TracingPlugin({ endpoint: rx.endpoint, batch: { scheduledDelayMillis: 10, maxExportBatchSize: 16 } })
    const runner = concurrentWeatherRunner(plugin)
    const runs = await Promise.all(Array.from({ length: 20 }, () => runWeather(runner)))
    await plugin.forceFlush()
    assert.equal(rx.spans.length, 100)
    assert.ok(rx.requests.every((r) => r.spanCount <= 16), 'maxExportBatchSize holds')
    const traces = byTrace(rx.spans)
    assert.equal(traces.size, 20)
    for (const spans of traces.values()) {
      const root = spans.find((s) => s.parentSpanId === undefined)
      assert.ok(root, 'each trace has its root')
      assert.equal(spans.length, 5, `${root.attributes['gen_ai.agent.id']}: ${spans.map((s) => s.name)}`)
      const ids = new Set(spans.map((s) => s.spanId))
      for (const s of spans) if (s !== root) assert.ok(ids.has(s.parentSpanId), 'parents stay inside their trace')
    }
    const roots = new Set(rx.spans.filter((s) => s.parentSpanId === undefined).map((s) => s.attributes['gen_ai.agent.id']))
    assert.deepEqual([...roots].sort(), runs.map((r) => r.invocationId).sort())
    assert.equal(plugin.droppedSpanCount, 0)
    await plugin.shutdown()
  } finally {
    await rx.stop()
  }
})

test('construction: bad endpoint and batch options are TypeErrors naming the option', () => {
  const cases = [
    [{ endpoint: 'localhost:4318/v1/traces' }, /endpoint/],
    [{ endpoint: 'ftp://127.0.0.1/v1/traces' }, /endpoint/],
    [{ endpoint: 'http://127.0.0.1:4318/v1/traces', batch: { exportTimeoutMillis: 0 } }, /exportTimeoutMillis/],
    [{ endpoint: 'http://127.0.0.1:4318/v1/traces', batch: { maxQueueSize: 0 } }, /maxQueueSize/],
    [{ endpoint: 'http://127.0.0.1:4318/v1/traces', batch: { maxQueueSize: 4, maxExportBatchSize: 8 } }, /maxExportBatchSize/],
    [{ endpoint: 'http://127.0.0.1:4318/v1/traces', headers: { 'x-n': 1 } }, /headers/],
    [{ endpoint: 'http://127.0.0.1:4318/v1/traces', headers: { 'bad name': 'v' } }, /header/],
    [{ endpoint: 'http://127.0.0.1:4318/v1/traces', resourceAttributes: { k: 2 } }, /resourceAttributes/],
    [{ exporter: 'zipkin' }, /exporter/],
  ]
  for (const [options, message] of cases) {
    assert.throws(() => new TracingPlugin(options), (err) => err instanceof TypeError && message.test(err.message), JSON.stringify(options))
  }
})

/** The tracing thread's context switches so far (Linux), or undefined. */
function tracingThreadSwitches() {
  let dir
  try {
    dir = readdirSync('/proc/self/task')
  } catch {
    return undefined
  }
  for (const tid of dir) {
    try {
      if (readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() !== 'adk-tracing') continue
      return Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[2])
    } catch {
      // the thread list changed under us
    }
  }
  return undefined
}

test('delivery: an idle tracing thread sleeps, and the next run wakes it with nothing reading the tracer', async () => {
  const rx = await startReceiver()
  try {
    const plugin = new TracingPlugin({ endpoint: rx.endpoint, batch: { scheduledDelayMillis: 20 } })
    const runner = weatherRunner(plugin, { runs: 2 })
    await runWeather(runner)
    await rx.waitForSpans(5)
    // Past its last looks for work (50 ms), the thread sleeps until woken.
    await sleep(300)
    const before = tracingThreadSwitches()
    await sleep(300)
    const after = tracingThreadSwitches()
    if (before !== undefined) assert.ok(after - before <= 1, `the idle tracing thread was switched in ${after - before} times in 300 ms`)
    // The second run's hand-over must wake it: nothing here calls the tracer.
    await runWeather(runner)
    const spans = await rx.waitForSpans(10, 3000)
    assert.equal(spans.length, 10)
    await plugin.shutdown()
  } finally {
    await rx.stop()
  }
})
