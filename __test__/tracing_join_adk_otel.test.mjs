// joinActiveTrace when the application registered a tracer provider: ADK
// 2.0.0 then records its own `invocation` span inside the application's
// span, and that span is the one active at beforeRunCallback. The run's root
// is its child: one trace from the service's span down to every span of
// ours. (Own file: a global tracer provider can be set once per process.)
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { context, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { addTool, agent, newSession, request, traced } from './helpers/tracing_helpers.mjs'
import { call } from './helpers/scripted_llm.mjs'

test("a run inside the service's span, with ADK's own OpenTelemetry spans recorded, is one trace", async () => {
  const manager = new AsyncLocalStorageContextManager().enable()
  context.setGlobalContextManager(manager)
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  assert.ok(trace.setGlobalTracerProvider(provider))
  try {
    const root = agent('root', [call('add', { a: 1, b: 2 }), 'three'], { tools: [addTool()] })
    const { tracing, runner } = traced(root)
    const session = await newSession(runner)
    const parent = await trace.getTracer('service').startActiveSpan('handle request', async (span) => {
      for await (const _ of runner.runAsync(request(session, 'add 1 and 2')));
      span.end()
      return span.spanContext()
    })
    await provider.forceFlush()
    const adk = exporter.getFinishedSpans()
    const invocation = adk.find((s) => s.name === 'invocation')
    assert.ok(invocation, `ADK's spans: ${adk.map((s) => s.name)}`)
    assert.equal(invocation.spanContext().traceId, parent.traceId)
    assert.equal(invocation.parentSpanContext?.spanId ?? invocation.parentSpanId, parent.spanId)

    const ours = tracing.getFinishedSpans()
    for (const s of ours) assert.equal(s.traceId, parent.traceId, s.name)
    const ids = new Set(ours.map((s) => s.spanId))
    const top = ours.filter((s) => !ids.has(s.parentSpanId))
    assert.equal(top.length, 1)
    assert.equal(top[0].name, 'invoke_agent root')
    assert.equal(top[0].parentSpanId, invocation.spanContext().spanId)
  } finally {
    trace.disable()
    context.disable()
  }
})
