// Tracing never throws into a run: every callback resolves to undefined
// whatever it is given; options errors are thrown at construction; foreign
// values are made JSON-safe.
import test from 'node:test'
import assert from 'node:assert/strict'
import { TracingPlugin } from '../index.js'
import { CALLBACK_NAMES } from '../lib/plugin_shell.js'
import { safeJson } from '../lib/tracing/json.js'

const throwing = new Proxy({}, { get() { throw new Error('hostile getter') } })

function cyclic() {
  const o = { big: 10n ** 20n, list: [1n] }
  o.self = o
  o.list.push(o)
  return o
}

function contexts(invocationId) {
  const ic = { invocationId, session: { id: 's', appName: 'app', userId: 'u' }, agent: undefined }
  return [
    { invocationContext: ic, get agentName() { throw new Error('no agent') }, functionCallId: 'c1' },
    { invocationContext: ic, agentName: 'a', functionCallId: 42 },
    { invocationContext: null },
    { invocationContext: throwing },
    throwing,
    null,
    undefined,
    42,
  ]
}

function garbageParams(invocationId) {
  const out = [undefined, null, {}, 'str', 0, throwing]
  for (const ctx of contexts(invocationId)) {
    const ic = ctx === throwing ? throwing : ctx?.invocationContext
    out.push({
      invocationContext: ic,
      callbackContext: ctx,
      toolContext: ctx,
      agent: { get name() { throw new Error('x') } },
      tool: { name: 'tool', get description() { throw new Error('x') } },
      toolArgs: cyclic(),
      result: cyclic(),
      error: Math.random() > 2 ? null : { name: 5, message: cyclic() },
      userMessage: { role: 'user', parts: [{ text: 'hi', extra: cyclic() }] },
      llmRequest: { model: 7, contents: [cyclic(), null, 5n], config: { temperature: 'hot', tools: cyclic(), systemInstruction: cyclic() } },
      llmResponse: { partial: 'no', content: cyclic(), usageMetadata: cyclic(), errorCode: 5n },
      event: { invocationId, author: throwing, content: { parts: [{ functionResponse: cyclic() }, null, { functionResponse: { id: 'c1', name: 'tool', response: cyclic() } }] }, errorCode: cyclic() },
    })
  }
  return out
}

test('all 17 callbacks resolve to undefined on garbage input and never throw', async () => {
  const warnings = []
  const onWarning = (w) => warnings.push(w)
  process.on('warning', onWarning)
  try {
    const tracing = new TracingPlugin({ exporter: 'memory' })
    assert.equal(CALLBACK_NAMES.length, 17)
    for (const name of CALLBACK_NAMES) {
      for (const params of garbageParams('garbage-1')) {
        let result
        assert.doesNotThrow(() => {
          result = tracing[name](params)
        }, name)
        assert.ok(result instanceof Promise, `${name} returns a Promise`)
        assert.equal(await result, undefined, name)
      }
    }
    tracing.finishInterruptedInvocation('garbage-1')
    assert.equal(tracing.openInvocationCount, 0)
    // the garbage still produced readable spans
    for (const s of tracing.getFinishedSpans()) {
      assert.equal(typeof s.name, 'string')
      for (const v of Object.values(s.attributes)) assert.ok(['string', 'number', 'boolean'].includes(typeof v) || Array.isArray(v))
    }
  } finally {
    await new Promise((r) => setImmediate(r))
    process.off('warning', onWarning)
  }
})

test('JSON safety: BigInt as decimal, only true cycles are [Circular], shared refs kept', () => {
  const shared = { k: 1 }
  const o = { a: shared, b: shared, n: 12345678901234567890n, f() {}, u: undefined }
  o.me = o
  const parsed = JSON.parse(safeJson(o))
  assert.deepEqual(parsed, { a: { k: 1 }, b: { k: 1 }, n: '12345678901234567890', me: '[Circular]' })
  assert.deepEqual(JSON.parse(safeJson([shared, shared, [1n]])), [{ k: 1 }, { k: 1 }, ['1']])
  const bad = { get boom() { throw new Error('x') }, ok: 1, big: 1n }
  assert.deepEqual(JSON.parse(safeJson(bad)), { boom: null, ok: 1, big: '1' })
  const badJson = { toJSON() { throw new Error('x') } }
  assert.equal(safeJson({ v: badJson, w: 2n }), '{"v":null,"w":"2"}')
})

test('tool arguments with BigInt, cycles and shared references reach the span safely', async () => {
  const tracing = new TracingPlugin({ exporter: 'memory', captureContent: true })
  const ic = { invocationId: 'json-1', session: { id: 's', appName: 'app', userId: 'u' } }
  const ctx = { invocationContext: ic, agentName: 'a', functionCallId: 'c1' }
  const shared = { x: 1 }
  const args = { n: 2n ** 70n, s1: shared, s2: shared }
  args.loop = args
  await tracing.beforeRunCallback({ invocationContext: ic })
  await tracing.beforeToolCallback({ tool: { name: 't' }, toolArgs: args, toolContext: ctx })
  tracing.finishInterruptedInvocation('json-1')
  const tool = tracing.getFinishedSpans().find((s) => s.name === 'execute_tool t')
  assert.deepEqual(JSON.parse(tool.attributes['gen_ai.tool.call.arguments']), {
    n: (2n ** 70n).toString(),
    s1: { x: 1 },
    s2: { x: 1 },
    loop: '[Circular]',
  })
  assert.equal(tool.attributes['weave.google_adk.interrupted'], true)
})

test('construction: option errors are TypeErrors; exporters none and memory work', () => {
  assert.throws(() => new TracingPlugin({ exporter: 'bogus' }), TypeError)
  assert.throws(() => new TracingPlugin({ captureContent: 'yes' }), TypeError)
  assert.throws(() => new TracingPlugin({ maxOpenInvocations: 0 }), TypeError)
  assert.throws(() => new TracingPlugin({ maxOpenInvocations: 1.5 }), TypeError)
  assert.throws(() => new TracingPlugin({ exitFlushTimeoutMillis: -1 }), TypeError)
  assert.throws(() => new TracingPlugin({ headers: { a: 1 } }), TypeError)
  assert.throws(() => new TracingPlugin(null), TypeError)
  assert.throws(() => new TracingPlugin({ name: null }), { name: 'TypeError', message: /option 'name' must be a string/ })
  assert.throws(() => new TracingPlugin({ name: 5 }), TypeError)
  assert.equal(new TracingPlugin({ exporter: 'none', name: undefined }).name, 'tracing_plugin')
  // Each message says what would do.
  assert.throws(() => new TracingPlugin({ exporter: 'none', batch: { maxQueueSize: 2 ** 33 } }), {
    name: 'TypeError',
    message: "TracingPlugin: option 'batch.maxQueueSize' must be a positive integer no greater than 4294967295.",
  })
  for (const exportTimeoutMillis of [0, NaN, null]) {
    assert.throws(() => new TracingPlugin({ exporter: 'none', batch: { exportTimeoutMillis } }), {
      name: 'TypeError',
      message: "TracingPlugin: option 'batch.exportTimeoutMillis' must be a positive integer.",
    })
  }
  const none = new TracingPlugin({ exporter: 'none', name: 'n' })
  assert.equal(none.name, 'n')
  assert.deepEqual(none.getFinishedSpans(), [])
  assert.equal(none.openInvocationCount, 0)
  assert.equal(none.droppedSpanCount, 0)
  const memory = new TracingPlugin({ exporter: 'memory', captureContent: false })
  assert.equal(memory.name, 'tracing_plugin')
  for (const name of CALLBACK_NAMES) assert.equal(typeof memory[name], 'function')
  assert.equal(typeof memory.beforeNodeCallback, 'function')
  assert.equal(typeof memory.afterNodeCallback, 'function')
})

test('read-only properties are getters; assigning changes nothing (as on the retry plugin)', () => {
  'use strict'
  const p = new TracingPlugin({ exporter: 'memory', name: 'keep' })
  for (const key of ['name', 'openInvocationCount', 'droppedSpanCount']) {
    assert.equal(typeof Object.getOwnPropertyDescriptor(TracingPlugin.prototype, key)?.get, 'function', key)
  }
  p.name = 'changed'
  p.openInvocationCount = 5
  p.droppedSpanCount = 5
  assert.deepEqual([p.name, p.openInvocationCount, p.droppedSpanCount], ['keep', 0, 0])
})

test('no exporter configured: one warning per process saying how to configure; a different kind of problem (a bad endpoint, an unsupported exporter) gets its own, once whatever the value', async () => {
  const saved = { ...process.env }
  for (const k of Object.keys(process.env)) if (k.startsWith('OTEL_')) delete process.env[k]
  const warnings = []
  const onWarning = (w) => warnings.push(w)
  process.on('warning', onWarning)
  try {
    new TracingPlugin({ name: 'w1' })
    new TracingPlugin({ name: 'w2' })
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = 'not a url'
    new TracingPlugin({ name: 'w3' })
    new TracingPlugin({ name: 'w4' })
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = 'ftp://x'
    new TracingPlugin({ name: 'w4b' })
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT
    process.env.OTEL_TRACES_EXPORTER = 'zipkin'
    new TracingPlugin({ name: 'w5' })
    process.env.OTEL_TRACES_EXPORTER = 'jaeger'
    new TracingPlugin({ name: 'w6' })
    await new Promise((r) => setImmediate(r))
    const ours = warnings.filter((w) => w.name === 'TracingPluginWarning' && w.code === 'ADK_TRACING_NO_EXPORTER')
    assert.equal(ours.length, 3, ours.map((w) => w.message).join('\n'))
    assert.match(ours[0].message, /no exporter is configured/)
    assert.match(ours[1].message, /OTEL_EXPORTER_OTLP_ENDPOINT/)
    assert.match(ours[2].message, /zipkin/)
  } finally {
    process.off('warning', onWarning)
    Object.assign(process.env, saved)
  }
})

test('throwing getters in a response usageMetadata or a request config: that run and the runs beside it are traced whole', async () => {
  const { InMemoryRunner } = await import('@google/adk')
  const { runOnce } = await import('./helpers/scripted_llm.mjs')
  const { agent, byName, plugin } = await import('./helpers/tracing_helpers.mjs')
  const hostile = (what) => ({
    get() {
      throw new Error(`${what} getter`)
    },
    enumerable: true,
    configurable: true,
  })
  const usageMetadata = Object.defineProperty({ candidatesTokenCount: 2 }, 'promptTokenCount', hostile('usage'))
  const answer = { content: { role: 'model', parts: [{ text: 'answer' }] }, finishReason: 'STOP', usageMetadata }
  // Registered before tracing; ADK's own model call then fails on the getter too.
  const seedGetter = plugin('seed_getter', {
    beforeModelCallback: async ({ callbackContext, llmRequest }) => {
      if (callbackContext.agentName === 'odd_config') Object.defineProperty(llmRequest.config, 'seed', hostile('config'))
      return undefined
    },
  })
  const tracing = new TracingPlugin({ exporter: 'memory' })
  const runnerOf = (root) => new InMemoryRunner({ agent: root, appName: 'app', plugins: [seedGetter, tracing] })
  const runners = [
    runnerOf(agent('odd_usage', [answer])),
    runnerOf(agent('odd_config', ['unreached'], { generateContentConfig: { temperature: 0.5 } })),
    runnerOf(agent('normal', ['fine 1', 'fine 2'])),
  ]
  const warnings = []
  const onWarning = (w) => warnings.push(w.message)
  process.on('warning', onWarning)
  await Promise.all([runOnce(runners[0]), runOnce(runners[1]), runOnce(runners[2]), runOnce(runners[2])])
  await new Promise((r) => setImmediate(r))
  process.off('warning', onWarning)
  assert.deepEqual(warnings, [])
  assert.equal(tracing.openInvocationCount, 0)
  const spans = tracing.getFinishedSpans()
  const roots = spans.filter((s) => s.parentSpanId === undefined)
  assert.deepEqual(roots.map((s) => s.name).sort(), ['invoke_agent normal', 'invoke_agent normal', 'invoke_agent odd_config', 'invoke_agent odd_usage'])
  for (const root of roots) assert.equal(root.attributes['weave.google_adk.interrupted'], undefined)
  const chats = byName(spans, 'chat scripted-model')
  assert.equal(chats.length, 4)
  const chatOf = (name) => chats.find((s) => s.attributes['gen_ai.agent.name'] === name)
  const usageChat = chatOf('odd_usage')
  assert.equal(usageChat.attributes['gen_ai.usage.output_tokens'], 2)
  assert.equal(usageChat.attributes['gen_ai.usage.input_tokens'], undefined)
  assert.deepEqual(usageChat.attributes['gen_ai.response.finish_reasons'], ['stop'])
  const configChat = chatOf('odd_config')
  assert.equal(configChat.attributes['gen_ai.request.temperature'], 0.5)
  assert.equal(configChat.attributes['gen_ai.request.seed'], undefined)
  assert.match(configChat.attributes['gen_ai.input.messages'], /hi/)
  for (const chat of chats.filter((s) => s.attributes['gen_ai.agent.name'] === 'normal')) {
    assert.deepEqual(chat.attributes['gen_ai.usage.output_tokens'], undefined)
    assert.match(chat.attributes['gen_ai.output.messages'], /fine/)
  }
})
