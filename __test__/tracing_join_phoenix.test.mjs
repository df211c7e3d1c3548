// End to end with a real Arize Phoenix: a service's span, exported by the
// OpenTelemetry JS SDK's OTLP/HTTP protobuf exporter, and the spans of an ADK
// run started inside it, exported by our TracingPlugin, read back over
// Phoenix's REST API as one trace: the run's root a child of the service span.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { context, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { startPhoenix } from './helpers/phoenix.mjs'
import { addTool, agent, newSession, request, traced } from './helpers/tracing_helpers.mjs'
import { call } from './helpers/scripted_llm.mjs'

const PROJECT = 'join-project'

describe('joinActiveTrace with Phoenix', { timeout: 20 * 60_000 }, () => {
  let phoenix
  before(async () => {
    phoenix = await startPhoenix()
  }, { timeout: 18 * 60_000 })
  after(async () => {
    await phoenix?.stop()
    context.disable()
  })

  test("the service's span and the agent's spans are one trace", { timeout: 90_000 }, async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'weather-service', 'openinference.project.name': PROJECT }),
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: phoenix.otlpUrl, timeoutMillis: 10_000 }), { scheduledDelayMillis: 50 })],
    })
    const root = agent('root', [call('add', { a: 1, b: 2 }), 'three'], { tools: [addTool()] })
    const { tracing, runner } = traced(root, {
      exporter: 'otlp',
      endpoint: phoenix.otlpUrl,
      serviceName: 'weather-agent',
      resourceAttributes: { 'openinference.project.name': PROJECT },
      batch: { scheduledDelayMillis: 50 },
    })
    const session = await newSession(runner)
    let invocationId
    const service = await provider.getTracer('service').startActiveSpan('POST /weather', async (span) => {
      for await (const event of runner.runAsync(request(session, 'add 1 and 2'))) invocationId ??= event.invocationId
      span.end()
      return span.spanContext()
    })
    await Promise.all([provider.forceFlush(), tracing.forceFlush()])
    await Promise.all([provider.shutdown(), tracing.shutdown()])
    assert.equal(tracing.traceIdOf(invocationId), service.traceId)

    const spans = await phoenix.waitForSpans(PROJECT, 6, 30_000)
    assert.equal(spans.length, 6, spans.map((s) => s.name).join())
    for (const s of spans) assert.equal(s.context.trace_id, service.traceId, s.name)
    const serviceSpan = spans.find((s) => s.name === 'POST /weather')
    assert.equal(serviceSpan.context.span_id, service.spanId)
    assert.equal(serviceSpan.parent_id, null)
    const children = spans.filter((s) => s.parent_id === service.spanId)
    assert.deepEqual(children.map((s) => s.name), ['invoke_agent root'])
    assert.equal(children[0].attributes['weave.google_adk.invocation_id'], invocationId)
    const ids = new Set(spans.map((s) => s.context.span_id))
    for (const s of spans) if (s !== serviceSpan) assert.ok(ids.has(s.parent_id), `${s.name} hangs in the trace`)
    assert.deepEqual(spans.map((s) => s.name).sort(), [
      'POST /weather', 'chat scripted-model', 'chat scripted-model', 'execute_tool add', 'invoke_agent root', 'invoke_agent root',
    ])
  })
})
