// joinActiveTrace: a run started inside the application's OpenTelemetry span
// (an AsyncLocalStorageContextManager registered, as an instrumented service
// does) is that span's child, in its trace — through a real InMemoryRunner.
// No tracer provider is registered globally here, so ADK's own `invocation`
// span is a non-recording span carrying the application's span context
// (tracing_join_adk_otel.test.mjs covers a registered provider).
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { after, before, describe, test } from 'node:test'
import { context, createTraceState, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { AlwaysOffSampler, BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { LlmAgent } from '@google/adk'
import { AgentTool, TracingPlugin } from '../index.js'
import { ScriptedLlm } from './helpers/scripted_llm.mjs'
import { addTool, agent, newSession, request, rootOf, traced } from './helpers/tracing_helpers.mjs'
import { call } from './helpers/scripted_llm.mjs'
import { startReceiver } from './helpers/otlp_receiver.mjs'

const manager = new AsyncLocalStorageContextManager()
before(() => {
  manager.enable()
  context.setGlobalContextManager(manager)
})
after(() => {
  context.disable()
})

function service({ sampled = true } = {}) {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
    ...(sampled ? {} : { sampler: new AlwaysOffSampler() }),
  })
  return { exporter, tracer: provider.getTracer('service') }
}

async function drain(runner, req) {
  let invocationId
  for await (const event of runner.runAsync(req)) invocationId ??= event.invocationId
  return invocationId
}

function weatherRun(options) {
  const root = agent('root', [call('add', { a: 1, b: 2 }), 'three'], { tools: [addTool()] })
  return traced(root, options)
}

/** One run inside the span `name` of `tracer`; that span's context and the run's id. */
async function runInside(tracer, runner, name = 'handle request') {
  const session = await newSession(runner)
  return tracer.startActiveSpan(name, async (span) => {
    try {
      const invocationId = await drain(runner, request(session, 'add 1 and 2'))
      return { parent: span.spanContext(), invocationId }
    } finally {
      span.end()
    }
  })
}

describe('joinActiveTrace', () => {
  test('a run inside an active span is its child, in its trace', async () => {
    const { tracer } = service()
    const { tracing, runner } = weatherRun()
    const { parent, invocationId } = await runInside(tracer, runner)
    const spans = tracing.getFinishedSpans()
    assert.ok(spans.length >= 5, spans.map((s) => s.name).join())
    for (const s of spans) assert.equal(s.traceId, parent.traceId, s.name)
    // The run's root is the one child of the service's span; every other
    // span is below it (the root agent's own invoke_agent span included).
    const top = spans.filter((s) => s.parentSpanId === parent.spanId)
    assert.equal(top.length, 1)
    const root = top[0]
    assert.equal(root.name, 'invoke_agent root')
    const ids = new Set(spans.map((s) => s.spanId))
    for (const s of spans) if (s !== root) assert.ok(ids.has(s.parentSpanId), s.name)
    assert.equal(root.attributes['weave.google_adk.invocation_id'], invocationId)
    assert.equal(tracing.traceIdOf(invocationId), parent.traceId)
  })

  test('two runs in one span share its trace; runs outside any span are new traces', async () => {
    const { tracer } = service()
    const { tracing, runner } = weatherRun()
    const session = await newSession(runner)
    const parent = await tracer.startActiveSpan('batch', async (span) => {
      await drain(runner, request(session, 'one'))
      await drain(runner, request(session, 'two'))
      span.end()
      return span.spanContext()
    })
    const outside = await drain(runner, request(session, 'three'))
    const spans = tracing.getFinishedSpans()
    const ids = new Set(spans.map((s) => s.spanId))
    const roots = spans.filter((s) => !ids.has(s.parentSpanId))
    assert.equal(roots.length, 3)
    assert.deepEqual(roots.slice(0, 2).map((r) => [r.traceId, r.parentSpanId]), [
      [parent.traceId, parent.spanId],
      [parent.traceId, parent.spanId],
    ])
    assert.equal(roots[2].parentSpanId, undefined)
    assert.notEqual(roots[2].traceId, parent.traceId)
    assert.equal(tracing.traceIdOf(outside), roots[2].traceId)
  })

  test('a parent propagated from another process: the root says so on the wire, every span carries its tracestate', async () => {
    // What an instrumented HTTP server makes of an incoming traceparent and
    // tracestate: a remote span context, active while the request is handled.
    const rx = await startReceiver()
    try {
      const remote = {
        traceId: '0af7651916cd43dd8448eb211c80319c',
        spanId: 'b7ad6b7169203331',
        traceFlags: 1,
        isRemote: true,
        traceState: createTraceState('vendor=abc,other=1'),
      }
      const { tracing, runner } = weatherRun({ exporter: 'otlp', endpoint: rx.endpoint })
      const session = await newSession(runner)
      await context.with(trace.setSpanContext(context.active(), remote), () => drain(runner, request(session, 'add 1 and 2')))
      const local = await runInside(service().tracer, runner)
      await tracing.forceFlush()
      const spans = rx.spans
      const joined = spans.filter((s) => s.traceId === remote.traceId)
      const inside = spans.filter((s) => s.traceId === local.parent.traceId)
      assert.ok(joined.length >= 5 && inside.length >= 3, `${joined.length} / ${inside.length} of ${spans.length}`)
      assert.equal(joined.length + inside.length, spans.length)
      for (const s of joined) assert.equal(s.traceState, 'vendor=abc,other=1', s.name)
      for (const s of inside) assert.ok(!s.traceState, s.name)
      // SpanFlags: sampled | CONTEXT_HAS_IS_REMOTE, plus CONTEXT_IS_REMOTE on
      // the root under the propagated parent only.
      const root = joined.find((s) => s.parentSpanId === remote.spanId)
      assert.equal(root?.name, 'invoke_agent root')
      assert.equal(root.flags, 0x301)
      for (const s of joined) if (s !== root) assert.equal(s.flags, 0x101, s.name)
      const localRoot = inside.find((s) => s.parentSpanId === local.parent.spanId)
      assert.equal(localRoot.flags, 0x101, 'a parent span of this process is local')
      await tracing.shutdown()
    } finally {
      await rx.stop()
    }
  })

  test('a parent that is not sampled: no span is recorded, the trace id is still known', async () => {
    const { tracer } = service({ sampled: false })
    const { tracing, runner } = weatherRun()
    const { parent, invocationId } = await runInside(tracer, runner)
    assert.equal(parent.traceFlags & 1, 0)
    assert.deepEqual(tracing.getFinishedSpans(), [])
    assert.equal(tracing.openInvocationCount, 0)
    assert.equal(tracing.traceIdOf(invocationId), parent.traceId)
    // The next run outside the span is recorded as usual.
    await drain(runner, request(await newSession(runner)))
    assert.equal(rootOf(tracing.getFinishedSpans()).parentSpanId, undefined)
  })

  test('joinActiveTrace: false keeps every run a new trace', async () => {
    const { tracer } = service()
    const { tracing, runner } = weatherRun({ joinActiveTrace: false })
    const { parent, invocationId } = await runInside(tracer, runner)
    const root = rootOf(tracing.getFinishedSpans())
    assert.equal(root.parentSpanId, undefined)
    assert.notEqual(root.traceId, parent.traceId)
    assert.equal(tracing.traceIdOf(invocationId), root.traceId)
  })

  test("an AgentTool run stays under its call's execute_tool span, all in the service's trace", async () => {
    const { tracer } = service()
    const sub = new LlmAgent({ name: 'helper', description: 'helps', model: new ScriptedLlm(['sub done']) })
    const root = new LlmAgent({ name: 'root', model: new ScriptedLlm([call('helper', { request: 'do it' }), 'all done']), tools: [new AgentTool({ agent: sub })] })
    const { tracing, runner } = traced(root)
    const { parent } = await runInside(tracer, runner)
    const spans = tracing.getFinishedSpans()
    for (const s of spans) assert.equal(s.traceId, parent.traceId, s.name)
    const top = spans.filter((s) => s.parentSpanId === parent.spanId)
    assert.deepEqual(top.map((s) => s.name), ['invoke_agent root'])
    const callSpan = spans.find((s) => s.name === 'execute_tool helper')
    assert.deepEqual(spans.filter((s) => s.parentSpanId === callSpan.spanId).map((s) => s.name), ['invoke_agent helper'])
  })

  test('a non-boolean joinActiveTrace is a TypeError naming the option', () => {
    for (const bad of [null, 1, 'true', {}]) {
      assert.throws(() => new TracingPlugin({ exporter: 'none', joinActiveTrace: bad }), (e) => e instanceof TypeError && /joinActiveTrace/.test(e.message))
    }
    new TracingPlugin({ exporter: 'none', joinActiveTrace: undefined }).shutdown()
  })
})

describe('traceIdOf', () => {
  test('open, finished, unknown and non-string ids; never throws', async () => {
    const tracing = new TracingPlugin({ exporter: 'none' })
    const ic = (invocationId) => ({ invocationContext: { invocationId, session: { id: 's' }, agent: undefined } })
    await tracing.beforeRunCallback(ic('open-one'))
    const open = tracing.traceIdOf('open-one')
    assert.match(open, /^[0-9a-f]{32}$/)
    await tracing.afterRunCallback(ic('open-one'))
    assert.equal(tracing.traceIdOf('open-one'), open)
    assert.equal(tracing.traceIdOf('never-started'), undefined)
    for (const bad of [undefined, null, 1, {}, Symbol('x'), 10n, new Proxy({}, { get() { throw new Error('trap') } })]) {
      assert.equal(tracing.traceIdOf(bad), undefined)
    }
    await tracing.shutdown()
    assert.equal(tracing.traceIdOf('open-one'), open)
  })

  test('the last 10,000 finished invocations are remembered, older ones forgotten', async () => {
    const tracing = new TracingPlugin({ exporter: 'none' })
    const ic = (invocationId) => ({ invocationContext: { invocationId } })
    await tracing.beforeRunCallback(ic('first'))
    tracing.finishInterruptedInvocation('first')
    const first = tracing.traceIdOf('first')
    const seen = new Set([first])
    for (let i = 0; i < 9_999; i++) {
      await tracing.beforeRunCallback(ic(`inv-${i}`))
      tracing.finishInterruptedInvocation(`inv-${i}`)
      seen.add(tracing.traceIdOf(`inv-${i}`))
    }
    assert.equal(seen.size, 10_000, 'every run its own trace')
    assert.equal(tracing.traceIdOf('first'), first)
    await tracing.beforeRunCallback(ic('one-more'))
    tracing.finishInterruptedInvocation('one-more')
    assert.equal(tracing.traceIdOf('first'), undefined)
    assert.match(tracing.traceIdOf('inv-0'), /^[0-9a-f]{32}$/)
    await tracing.shutdown()
  })
})

test('without @opentelemetry/api the plugin loads, every run is a new trace, and the load is tried once, when an application registered something', () => {
  const script = fileURLToPath(new URL('./fixtures/join_without_otel_api.cjs', import.meta.url))
  const r = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 60_000 })
  assert.equal(r.status, 0, r.stderr)
  assert.deepEqual(JSON.parse(r.stdout.trim().split('\n').pop()), { attemptsUnregistered: 0, attempts: 1, roots: 4, parents: 0, distinctTraces: 4, warnings: 0 })
})
