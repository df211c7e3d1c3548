// Proves the Phoenix helper against a real Arize Phoenix server: spans exported
// with the OpenTelemetry JS SDK over OTLP/HTTP protobuf come back through
// Phoenix's REST API with their names, ids, parents, attributes and status, in
// the project the resource attribute (or header) names.
//
// The first run installs the pinned Phoenix into .cache/phoenix-venv (~50 s,
// bounded at 15 min); later runs reuse it (~7 s to start).
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { context, trace } from '@opentelemetry/api'
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { startPhoenix } from './helpers/phoenix.mjs'

function exportTree(endpoint, resource, exporterOptions = {}) {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes(resource),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: endpoint, timeoutMillis: 10_000, ...exporterOptions }), {
        scheduledDelayMillis: 50,
      }),
    ],
  })
  const tracer = provider.getTracer('harness')
  const root = tracer.startSpan('invoke_agent root', {
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'root' },
  })
  const rootCtx = trace.setSpan(context.active(), root)
  const agent = tracer.startSpan('invoke_agent helper', { attributes: { 'gen_ai.agent.name': 'helper' } }, rootCtx)
  const agentCtx = trace.setSpan(context.active(), agent)
  const chat = tracer.startSpan('chat scripted-model', {
    attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.usage.input_tokens': 12, 'gen_ai.request.temperature': 0.5 },
  }, agentCtx)
  chat.end()
  const tool = tracer.startSpan('execute_tool lookup', { attributes: { 'gen_ai.tool.name': 'lookup' } }, agentCtx)
  tool.setStatus({ code: 2, message: 'tool failed' })
  tool.end()
  agent.end()
  root.end()
  const id = (s) => s.spanContext().spanId
  return {
    provider,
    traceId: root.spanContext().traceId,
    ids: { root: id(root), agent: id(agent), chat: id(chat), tool: id(tool) },
  }
}

describe('Phoenix helper', { timeout: 20 * 60_000 }, () => {
  let phoenix
  before(async () => {
    const t0 = performance.now()
    phoenix = await startPhoenix({ log: (m) => console.log(m) })
    const total = (performance.now() - t0) / 1000
    const { installed, seconds } = phoenix.install
    const install = installed ? `installed in ${seconds.toFixed(1)} s` : seconds > 0 ? `waited ${seconds.toFixed(1)} s for another process's install` : 'cached'
    console.log(`phoenix ${phoenix.version}: ${install}, start ${phoenix.startSeconds.toFixed(1)} s, total ${total.toFixed(1)} s`)
  }, { timeout: 18 * 60_000 })
  after(async () => {
    const t = performance.now()
    await phoenix?.stop()
    console.log(`phoenix stopped in ${((performance.now() - t) / 1000).toFixed(1)} s`)
  })

  test('serves only on loopback and names its OTLP endpoint', async () => {
    assert.match(phoenix.url, /^http:\/\/127\.0\.0\.1:\d+$/)
    assert.equal(phoenix.otlpUrl, `${phoenix.url}/v1/traces`)
    assert.notEqual(phoenix.grpcPort, 4317)
    const health = await fetch(`${phoenix.url}/healthz`)
    assert.equal(health.status, 200)
  })

  test('spans land in the project named by openinference.project.name, with names and parents', { timeout: 60_000 }, async () => {
    const { provider, traceId, ids } = exportTree(phoenix.otlpUrl, {
      'service.name': 'harness',
      'openinference.project.name': 'harness-project',
    })
    await provider.forceFlush()
    await provider.shutdown()
    const spans = await phoenix.waitForSpans('harness-project', 4, 30_000)
    assert.equal(spans.length, 4)
    const byName = Object.fromEntries(spans.map((s) => [s.name, s]))
    const root = byName['invoke_agent root']
    const agent = byName['invoke_agent helper']
    const chat = byName['chat scripted-model']
    const tool = byName['execute_tool lookup']
    assert.ok(root && agent && chat && tool, `names: ${spans.map((s) => s.name)}`)
    for (const s of spans) assert.equal(s.context.trace_id, traceId)
    assert.equal(root.context.span_id, ids.root)
    assert.equal(root.parent_id, null)
    assert.equal(agent.parent_id, ids.root)
    assert.equal(chat.parent_id, ids.agent)
    assert.equal(tool.parent_id, ids.agent)
    assert.equal(tool.context.span_id, ids.tool)
    assert.equal(chat.attributes['gen_ai.usage.input_tokens'], 12)
    assert.equal(chat.attributes['gen_ai.request.temperature'], 0.5)
    assert.equal(root.attributes['gen_ai.agent.name'], 'root')
    assert.equal(tool.status_code, 'ERROR')
    assert.equal(tool.status_message, 'tool failed')
    assert.equal(root.status_code, 'UNSET')
    // service.name does not pick the project.
    assert.deepEqual(await phoenix.projectSpans('harness'), [])
  })

  test('without the attribute spans go to `default`; x-project-name wins over it; gzip accepted', { timeout: 60_000 }, async () => {
    const plain = exportTree(phoenix.otlpUrl, { 'service.name': 'no-project' }, { compression: 'gzip' })
    await plain.provider.forceFlush()
    await plain.provider.shutdown()
    const viaHeader = exportTree(
      phoenix.otlpUrl,
      { 'service.name': 'header', 'openinference.project.name': 'ignored-project' },
      { headers: { 'x-project-name': 'header-project' } },
    )
    await viaHeader.provider.forceFlush()
    await viaHeader.provider.shutdown()

    const defaults = await phoenix.waitForSpans('default', 4, 30_000)
    assert.deepEqual(new Set(defaults.map((s) => s.context.trace_id)), new Set([plain.traceId]))
    const headerSpans = await phoenix.waitForSpans('header-project', 4, 30_000)
    assert.equal(headerSpans.find((s) => s.name === 'chat scripted-model').parent_id, viaHeader.ids.agent)
    assert.ok(!(await phoenix.projects()).includes('ignored-project'))
  })

  test('Phoenix rejects OTLP JSON (415): protobuf only', async () => {
    const res = await fetch(phoenix.otlpUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    assert.equal(res.status, 415)
  })
})
