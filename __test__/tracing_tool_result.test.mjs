// A tool span's result without its function response event (tracing.md
// "Added: Tool result"): the result afterToolCallback saw, unless an error is
// on the span; the event, whenever it reaches this plugin, wins.
import test from 'node:test'
import assert from 'node:assert/strict'
import { Context, FunctionTool, InvocationContext, LongRunningFunctionTool, PluginManager } from '@google/adk'
import { ReflectAndRetryToolPlugin } from '../index.js'
import { call, runOnce } from './helpers/scripted_llm.mjs'
import { agent, addTool, traced, one, byName, plugin, newSession, request, rootOf } from './helpers/tracing_helpers.mjs'

const isResponseEvent = (event) => event.content?.parts?.some((p) => p.functionResponse)

/** Registered before TracingPlugin: answers onEventCallback for function
 * response events with a redacted copy, so ADK never hands them on. */
function redactor() {
  return plugin('redactor', {
    onEventCallback: async ({ event }) => {
      if (!isResponseEvent(event)) return undefined
      const parts = event.content.parts.map((p) =>
        p.functionResponse ? { functionResponse: { ...p.functionResponse, response: { redacted: true } } } : p,
      )
      return { ...event, content: { role: 'user', parts } }
    },
  })
}

test('an earlier plugin answers onEventCallback: the result afterToolCallback saw', async () => {
  const root = agent('a', [call('add', { a: 1, b: 2 }), 'three'], { tools: [addTool()] })
  const { tracing, runner } = traced(root, { before: [redactor()] })
  const { events } = await runOnce(runner)
  // The event the run (and the model) got is the redacted one.
  assert.deepEqual(events.find(isResponseEvent).content.parts[0].functionResponse.response, { redacted: true })
  const spans = tracing.getFinishedSpans()
  const tool = one(spans, 'execute_tool add')
  assert.equal(tool.attributes['gen_ai.tool.call.result'], JSON.stringify({ sum: 3 }))
  assert.equal(tool.status.code, 0)
  assert.equal(tool.attributes['weave.google_adk.interrupted'], undefined)
  // Ended when its afterToolCallback ran, before the next model call.
  const chats = byName(spans, 'chat scripted-model').sort((x, y) => Number(x.startTimeUnixNano - y.startTimeUnixNano))
  assert.ok(tool.endTimeUnixNano <= chats[1].startTimeUnixNano)
  assert.equal(tracing.openInvocationCount, 0)
  // Ended back then, it is read in end order all the same (api.md).
  for (let i = 1; i < spans.length; i++) assert.ok(spans[i - 1].endTimeUnixNano <= spans[i].endTimeUnixNano, `span ${i} in end order`)
  assert.equal(spans.at(-1), rootOf(spans))
})

test('an earlier plugin answers onEventCallback in a run of 70 tool calls: every span gets the result afterToolCallback saw', async () => {
  // More results than an invocation holds (64): the oldest are made JSON
  // when pushed out, in one turn of parallel calls and over many turns.
  const echo = new FunctionTool({ name: 'echo', description: 'echo', execute: async ({ i }) => ({ i }) })
  const calls = Array.from({ length: 70 }, (_, i) => ({ functionCall: { name: 'echo', args: { i }, id: `c${i}` } }))
  for (const script of [[calls, 'done'], [...calls.map((c) => [c]), 'done']]) {
    const { tracing, runner } = traced(agent('a', script, { tools: [echo] }), { before: [redactor()] })
    await runOnce(runner)
    const tools = byName(tracing.getFinishedSpans(), 'execute_tool echo')
    assert.equal(tools.length, 70)
    for (const span of tools) {
      const i = Number(span.attributes['gen_ai.tool.call.id'].slice(1))
      assert.equal(span.attributes['gen_ai.tool.call.result'], JSON.stringify({ i }))
    }
    assert.equal(tracing.openInvocationCount, 0)
  }
})

test('without content capture the result afterToolCallback saw is not recorded', async () => {
  const root = agent('a', [call('add', { a: 1, b: 2 }), 'three'], { tools: [addTool()] })
  const { tracing, runner } = traced(root, { before: [redactor()], captureContent: false })
  await runOnce(runner)
  const tool = one(tracing.getFinishedSpans(), 'execute_tool add')
  assert.equal(tool.attributes['gen_ai.tool.call.result'], undefined)
  assert.equal(tool.attributes['gen_ai.tool.call.arguments'], undefined)
})

test('the function response event wins over what afterToolCallback saw', async () => {
  // A plugin after TracingPlugin rewrites the result: the model sees that.
  const rewriter = plugin('rewriter', { afterToolCallback: async () => ({ sum: 'rewritten' }) })
  const root = agent('a', [call('add', { a: 1, b: 2 }), 'three'], { tools: [addTool()] })
  const { tracing, runner } = traced(root, { plugins: [rewriter] })
  await runOnce(runner)
  const tool = one(tracing.getFinishedSpans(), 'execute_tool add')
  assert.equal(tool.attributes['gen_ai.tool.call.result'], JSON.stringify({ sum: 'rewritten' }))
})

test('a long-running tool whose run stops before its response event: the result afterToolCallback saw', async () => {
  const controller = new AbortController()
  // The application starts the job and stops the run to wait for it.
  const ticket = new LongRunningFunctionTool({
    name: 'open_ticket',
    description: 'Opens a ticket for a human to handle',
    execute: async () => {
      controller.abort()
      return { status: 'pending', ticket: 'T-1' }
    },
  })
  const root = agent('a', [call('open_ticket', {}), 'waiting'], { tools: [ticket] })
  const { tracing, runner } = traced(root)
  const sessionId = await newSession(runner)
  let invocationId
  const seen = []
  for await (const ev of runner.runAsync({ ...request(sessionId), abortSignal: controller.signal })) {
    invocationId = ev.invocationId
    seen.push(ev)
  }
  assert.ok(!seen.some(isResponseEvent), 'no function response event came')
  tracing.finishInterruptedInvocation(invocationId)
  const tool = one(tracing.getFinishedSpans(), 'execute_tool open_ticket')
  assert.equal(tool.attributes['gen_ai.tool.call.result'], JSON.stringify({ status: 'pending', ticket: 'T-1' }))
  assert.equal(tool.status.code, 0)
  assert.equal(tool.attributes['weave.google_adk.interrupted'], undefined)
})

test("a long-running tool that returns nothing (ADK sends no response): the result afterToolCallback saw, undefined made JSON-safe, is null", async () => {
  const job = new LongRunningFunctionTool({ name: 'start_job', description: 'Starts a job', execute: async () => undefined })
  const root = agent('a', [call('start_job', {}), 'started'], { tools: [job] })
  const { tracing, runner } = traced(root)
  const { events } = await runOnce(runner)
  assert.ok(!events.some(isResponseEvent))
  const tool = one(tracing.getFinishedSpans(), 'execute_tool start_job')
  assert.equal(tool.attributes['gen_ai.tool.call.result'], 'null')
  assert.equal(tool.attributes['weave.google_adk.interrupted'], undefined)
})

class ValueError extends Error {
  constructor(m) {
    super(m)
    this.name = 'ValueError'
  }
}

/** The tool spans of a run whose tool throws, with the retry plugin. */
async function retried(order, { stopEvents }) {
  const flaky = new FunctionTool({
    name: 'flaky',
    description: 'fails',
    execute: async () => {
      throw new ValueError('nope')
    },
  })
  const root = agent('a', [call('flaky', {}), call('flaky', {}), 'gave up'], { tools: [flaky] })
  const retry = new ReflectAndRetryToolPlugin({ maxRetries: 1, throwExceptionIfRetryExceeded: false })
  const before = [...(stopEvents ? [redactor()] : []), ...(order === 'before' ? [retry] : [])]
  const { tracing, runner } = traced(root, { before, plugins: order === 'after' ? [retry] : [] })
  await runOnce(runner)
  assert.equal(tracing.openInvocationCount, 0)
  return byName(tracing.getFinishedSpans(), 'execute_tool flaky')
    .sort((x, y) => Number(x.startTimeUnixNano - y.startTimeUnixNano))
    .map((s) => ({
      status: s.status.code,
      message: s.status.message,
      type: s.attributes['error.type'],
      count: s.attributes['adk.retry.count'],
      outcome: s.attributes['adk.retry.outcome'],
      result: s.attributes['gen_ai.tool.call.result'],
      interrupted: s.attributes['weave.google_adk.interrupted'],
    }))
}

for (const order of ['before', 'after']) {
  test(`retry plugin ${order} tracing rewrites a thrown error, no response event: still ERROR, no result`, async () => {
    const withEvents = await retried(order, { stopEvents: false })
    const withoutEvents = await retried(order, { stopEvents: true })
    assert.deepEqual(
      withEvents.map((s) => [s.status, s.count, s.outcome, s.result]),
      [
        [2, 1, 'retry', undefined],
        [2, 1, 'exceeded', undefined],
      ],
    )
    // The result afterToolCallback saw was the retry plugin's response:
    // the same outcome as when the event carries it.
    assert.deepEqual(withoutEvents, withEvents)
  })
}

test('a run pushed out by maxOpenInvocations keeps the result afterToolCallback saw', async () => {
  // Driven callback by callback on ADK's own contexts: the first run's tool
  // returned (afterToolCallback saw its result), then the run was left open
  // without its function response event, and a second run's start pushes
  // it out of the single open slot.
  const { tracing } = traced(agent('a', ['x'], { tools: [addTool()] }), { maxOpenInvocations: 1 })
  const a = agent('a', ['x'], { tools: [addTool()] })
  const tool = addTool()
  const session = { id: 's', appName: 'app', userId: 'u', state: {}, events: [], lastUpdateTime: 0 }
  const start = (invocationId) => {
    const ic = new InvocationContext({ invocationId, agent: a, session, pluginManager: new PluginManager([]), runConfig: {} })
    tracing.onUserMessageCallback({ invocationContext: ic, userMessage: { role: 'user', parts: [{ text: 'hi' }] } })
    return ic
  }
  const first = start('inv-1')
  const toolContext = new Context({ invocationContext: first, functionCallId: 'call-1' })
  tracing.beforeAgentCallback({ agent: a, callbackContext: new Context({ invocationContext: first }) })
  tracing.beforeToolCallback({ tool, toolArgs: { a: 1, b: 2 }, toolContext })
  tracing.afterToolCallback({ tool, toolArgs: { a: 1, b: 2 }, toolContext, result: { sum: 3 } })
  start('inv-2')
  assert.equal(tracing.openInvocationCount, 1)
  const spans = tracing.getFinishedSpans()
  const root = spans.find((s) => s.parentSpanId === undefined)
  assert.equal(root?.attributes['weave.google_adk.invocation_id'], 'inv-1')
  assert.equal(root.attributes['weave.google_adk.interrupted'], true)
  assert.equal(one(spans, 'execute_tool add').attributes['gen_ai.tool.call.result'], JSON.stringify({ sum: 3 }))
  tracing.finishInterruptedInvocation('inv-2')
  assert.equal(tracing.openInvocationCount, 0)
})

// A plugin registered before this one that answers beforeToolCallback (ADK's
// own SecurityPlugin refusing a call, a cache) stops that chain before this
// plugin's: the call's span starts at its afterToolCallback, which ADK runs
// for every call, and shows what the model got.
test('a call an earlier plugin answers in beforeToolCallback still gets its span', async (t) => {
  const adk = await import('@google/adk')
  if (typeof adk.SecurityPlugin !== 'function') return t.skip('this ADK has no SecurityPlugin')
  const policyEngine = {
    evaluate: async ({ toolArgs }) =>
      toolArgs.a === 13 ? { outcome: 'DENY', reason: 'unlucky' } : { outcome: 'ALLOW', reason: 'fine' },
  }
  for (const securityFirst of [true, false]) {
    const security = new adk.SecurityPlugin({ policyEngine })
    const script = [call('add', { a: 13, b: 1 }, 'c1'), call('add', { a: 1, b: 2 }, 'c2'), call('add', { a: 13, b: 2 }, 'c3'), 'done']
    const root = agent('a', script, { tools: [addTool()] })
    const { tracing, runner } = traced(root, securityFirst ? { before: [security] } : { plugins: [security] })
    await runOnce(runner)
    assert.equal(tracing.openInvocationCount, 0)
    const spans = tracing.getFinishedSpans()
    const agentSpan = byName(spans, 'invoke_agent a').find((s) => s.parentSpanId !== undefined)
    const tools = byName(spans, 'execute_tool add').sort((x, y) => Number(x.startTimeUnixNano - y.startTimeUnixNano))
    const refused = { error: 'This tool call is rejected by policy engine. Reason: unlucky' }
    assert.deepEqual(
      tools.map((s) => ['id', 'arguments', 'result'].map((k) => s.attributes[`gen_ai.tool.call.${k}`])),
      [
        ['c1', JSON.stringify({ a: 13, b: 1 }), JSON.stringify(refused)],
        ['c2', JSON.stringify({ a: 1, b: 2 }), JSON.stringify({ sum: 3 })],
        ['c3', JSON.stringify({ a: 13, b: 2 }), JSON.stringify(refused)],
      ],
      `security plugin ${securityFirst ? 'first' : 'after'}`,
    )
    for (const s of tools) {
      assert.equal(s.parentSpanId, agentSpan.spanId)
      assert.equal(s.status.code, 0)
      assert.equal(s.attributes['weave.google_adk.interrupted'], undefined)
      assert.ok(s.endTimeUnixNano >= s.startTimeUnixNano)
    }
  }
})
