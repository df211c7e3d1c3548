// Content capture, provider and attribute-length rules (tracing.md
// "Attributes"). Runs in its own process: it changes process.env.
import test from 'node:test'
import assert from 'node:assert/strict'
import { call, runOnce } from './helpers/scripted_llm.mjs'
import { agent, addTool, traced, rootOf } from './helpers/tracing_helpers.mjs'
import { Worker } from 'node:worker_threads'
import { startReceiver } from './helpers/otlp_receiver.mjs'

const CAPTURED = ['gen_ai.input.messages', 'gen_ai.output.messages', 'gen_ai.system_instructions', 'gen_ai.tool.call.arguments', 'gen_ai.tool.call.result']

async function spansWith(env, options = {}) {
  const saved = {}
  for (const [k, v] of Object.entries(env)) {
    saved[k] = process.env[k]
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
  try {
    const root = agent('calc', [call('add', { a: 1, b: 2 }), 'three'], { tools: [addTool()], instruction: 'x' })
    const { tracing, runner } = traced(root, options)
    await runOnce(runner, 'add them please')
    return tracing.getFinishedSpans()
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }
}

function captured(spans) {
  return spans.flatMap((s) => CAPTURED.filter((k) => k in s.attributes))
}

const CAPTURE = 'ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS'

test('capture: unset or empty means on; only exactly true or 1 otherwise', async () => {
  for (const value of [undefined, '', 'true', '1']) {
    const spans = await spansWith({ [CAPTURE]: value })
    assert.deepEqual(new Set(captured(spans)), new Set(CAPTURED), `env ${JSON.stringify(value)}`)
  }
  for (const value of ['false', '0', 'TRUE', 'True', 'yes', ' 1']) {
    const spans = await spansWith({ [CAPTURE]: value })
    assert.deepEqual(captured(spans), [], `env ${JSON.stringify(value)}`)
    // not gated: tool definitions and the rest stay
    assert.ok(spans.some((s) => 'gen_ai.tool.definitions' in s.attributes))
    assert.equal(rootOf(spans).attributes['gen_ai.output.type'], undefined)
  }
})

test('the captureContent option beats the environment', async () => {
  assert.deepEqual(captured(await spansWith({ [CAPTURE]: 'true' }, { captureContent: false })), [])
  assert.equal(new Set(captured(await spansWith({ [CAPTURE]: 'false' }, { captureContent: true }))).size, CAPTURED.length)
})

test('provider: vertex_ai iff GOOGLE_GENAI_USE_VERTEXAI lowercased is true', async () => {
  for (const [value, want] of [['true', 'vertex_ai'], ['TRUE', 'vertex_ai'], ['True', 'vertex_ai'], ['1', 'gemini'], [undefined, 'gemini'], ['false', 'gemini']]) {
    const spans = await spansWith({ GOOGLE_GENAI_USE_VERTEXAI: value })
    for (const s of spans) assert.equal(s.attributes['gen_ai.provider.name'], want, `env ${value} on ${s.name}`)
  }
})

test('OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT truncates attribute values', async () => {
  const spans = await spansWith({ OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '12' })
  const root = rootOf(spans)
  assert.equal(root.attributes['gen_ai.input.messages'].length, 12)
  const chat = spans.find((s) => s.name === 'chat scripted-model')
  assert.equal(chat.attributes['gen_ai.tool.definitions'].length, 12)
  const untruncated = await spansWith({ OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: undefined })
  assert.ok(rootOf(untruncated).attributes['gen_ai.input.messages'].length > 12)
})

const LIMITS = { OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT: undefined, OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: undefined }

/** Each string value (and array item) of every span, with where it is. */
function stringValues(spans) {
  return spans.flatMap((s) =>
    Object.entries(s.attributes).flatMap(([k, v]) =>
      typeof v === 'string' ? [[`${s.name} ${k}`, v]] : Array.isArray(v) ? v.filter((x) => typeof x === 'string').map((x) => [`${s.name} ${k}[]`, x]) : [],
    ),
  )
}

test('OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT beats OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT and cuts every string value, as an OpenTelemetry SDK does', async () => {
  const spans = await spansWith({ ...LIMITS, OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT: '5', OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '100' })
  const values = stringValues(spans)
  assert.ok(values.length > 20)
  for (const [where, v] of values) assert.ok(v.length <= 5, `${where} = ${JSON.stringify(v)}`)
  // Values the plugin writes itself are cut too, not only the run's content.
  assert.equal(rootOf(spans).attributes['gen_ai.operation.name'], 'invok')
  assert.equal(rootOf(spans).attributes['gen_ai.provider.name'], 'gemin')
  // Empty counts as unset: the general variable applies.
  const general = await spansWith({ ...LIMITS, OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT: '', OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '7' })
  assert.equal(rootOf(general).attributes['gen_ai.operation.name'], 'invoke_')
})

test('a length limit that is not a whole number cuts nothing and is warned about once', async () => {
  const warnings = []
  const onWarning = (w) => warnings.push(w)
  process.on('warning', onWarning)
  try {
    const saved = process.env.OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT
    process.env.OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT = 'ten'
    let spans
    try {
      const root = agent('calc', [call('add', { a: 1, b: 2 }), 'three', 'four'], { tools: [addTool()], instruction: 'x' })
      const { tracing, runner } = traced(root)
      await runOnce(runner, 'add them please')
      await runOnce(runner, 'and again')
      spans = tracing.getFinishedSpans()
      await tracing.shutdown()
    } finally {
      if (saved === undefined) delete process.env.OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT
      else process.env.OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT = saved
    }
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(spans.filter((s) => s.parentSpanId === undefined).length, 2, 'two runs')
    for (const root of spans.filter((s) => s.parentSpanId === undefined)) {
      assert.equal(root.attributes['gen_ai.operation.name'], 'invoke_agent')
      assert.ok(root.attributes['gen_ai.input.messages'].length > 20)
    }
    const ours = warnings.filter((w) => w.message.includes('OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT'))
    assert.equal(ours.length, 1, ours.map((w) => w.message).join('\n'))
    assert.match(ours[0].message, /'ten' is not a whole number; attribute values are not cut/)
  } finally {
    process.off('warning', onWarning)
  }
})

test("a worker thread's own environment decides its runs' rules", async () => {
  const inWorker = (env) =>
    new Promise((resolve, reject) => {
      const w = new Worker(new URL('./fixtures/env_in_worker.mjs', import.meta.url), { env })
      w.once('message', resolve)
      w.once('error', reject)
    })
  // The process's environment says the opposite of the worker's copy.
  const saved = { c: process.env[CAPTURE], v: process.env.GOOGLE_GENAI_USE_VERTEXAI, l: process.env.OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT }
  delete process.env[CAPTURE]
  delete process.env.GOOGLE_GENAI_USE_VERTEXAI
  delete process.env.OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT
  try {
    const off = await inWorker({ ...process.env, [CAPTURE]: 'false', GOOGLE_GENAI_USE_VERTEXAI: 'true' })
    assert.deepEqual(off, { captured: 0, providers: ['vertex_ai'], operations: ['chat', 'execute_tool', 'invoke_agent'] })
    const on = await inWorker({ ...process.env })
    assert.ok(on.captured > 0)
    assert.deepEqual(on.providers, ['gemini'])
    const cut = await inWorker({ ...process.env, OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT: '3' })
    assert.deepEqual(cut.operations, ['cha', 'exe', 'inv'])
  } finally {
    if (saved.c !== undefined) process.env[CAPTURE] = saved.c
    if (saved.v !== undefined) process.env.GOOGLE_GENAI_USE_VERTEXAI = saved.v
    if (saved.l !== undefined) process.env.OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT = saved.l
  }
})

test("a worker thread's own environment configures its exporter (OTEL_* given to the Worker only)", async () => {
  const rx = await startReceiver()
  try {
    for (const k of Object.keys(process.env)) assert.ok(!k.startsWith('OTEL_EXPORTER_OTLP_'), `the process's environment sets ${k}`)
    const env = { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: rx.url, OTEL_SERVICE_NAME: 'svc-of-the-worker' }
    const report = await new Promise((resolve, reject) => {
      const w = new Worker(new URL('./fixtures/exporter_env_in_worker.mjs', import.meta.url), { env })
      w.once('message', resolve)
      w.once('error', reject)
    })
    assert.deepEqual(report, { warnings: [], dropped: 0 })
    await rx.waitForSpans(5)
    assert.equal(rx.requests[0].path, '/v1/traces')
    assert.equal(rx.requests[0].body.resourceSpans[0].resource.attributes['service.name'], 'svc-of-the-worker')
  } finally {
    await rx.stop()
  }
})
