// TracingPlugin span trees through a real InMemoryRunner (tracing.md "Spans").
import test from 'node:test'
import assert from 'node:assert/strict'
import * as adk from '@google/adk'
import { ScriptedLlm, call, runOnce } from './helpers/scripted_llm.mjs'
import { agent, addTool, failingTool, traced, one, byName, rootOf, plugin } from './helpers/tracing_helpers.mjs'
import { needsAdk2 } from './helpers/adk_version.mjs'

// Workflow and START exist from ADK 2 on: a named import of them would fail the whole file on 1.x.
const { SequentialAgent, Workflow, START } = adk

const parse = (s) => JSON.parse(s)

test('single agent with a tool: names, parents, attributes, one trace', async () => {
  const root = agent('calc', [call('add', { a: 1, b: 2 }), 'three'], {
    tools: [addTool()],
    generateContentConfig: { temperature: 0.25, maxOutputTokens: 64, stopSequences: ['END'] },
    instruction: 'Be exact.',
  })
  const { tracing, runner } = traced(root)
  const { events, sessionId } = await runOnce(runner, 'add 1 and 2')
  const spans = tracing.getFinishedSpans()
  assert.deepEqual(
    spans.map((s) => s.name),
    ['chat scripted-model', 'execute_tool add', 'chat scripted-model', 'invoke_agent calc', 'invoke_agent calc'],
  )
  const rootSpan = spans[4]
  assert.equal(rootSpan.parentSpanId, undefined)
  assert.ok(!('parentSpanId' in rootSpan))
  const agentSpan = spans[3]
  assert.equal(agentSpan.parentSpanId, rootSpan.spanId)
  for (const s of spans.slice(0, 3)) assert.equal(s.parentSpanId, agentSpan.spanId)
  assert.equal(new Set(spans.map((s) => s.traceId)).size, 1)
  for (const s of spans) {
    assert.match(s.traceId, /^[0-9a-f]{32}$/)
    assert.match(s.spanId, /^[0-9a-f]{16}$/)
    assert.equal(typeof s.startTimeUnixNano, 'bigint')
    assert.ok(s.endTimeUnixNano >= s.startTimeUnixNano)
    assert.deepEqual(s.status, { code: 0 })
    assert.equal(s.attributes['gen_ai.provider.name'], 'gemini')
    assert.equal(s.attributes['gen_ai.conversation.id'], sessionId)
  }
  const invocationId = events[0].invocationId
  const ra = rootSpan.attributes
  assert.equal(ra['gen_ai.operation.name'], 'invoke_agent')
  assert.equal(ra['gen_ai.agent.id'], invocationId)
  assert.equal(ra['weave.google_adk.invocation_id'], invocationId)
  assert.equal(ra['gen_ai.agent.name'], 'calc')
  assert.equal(ra['gen_ai.agent.description'], 'calc agent')
  assert.equal(ra['weave.google_adk.app_name'], 'app')
  assert.equal(ra['weave.google_adk.user_id'], 'u')
  assert.deepEqual(parse(ra['gen_ai.input.messages']), [{ role: 'user', parts: [{ type: 'text', content: 'add 1 and 2' }] }])
  // The root's output is the last event's content, with no finish reason of its own ('' as in Weave).
  assert.deepEqual(parse(ra['gen_ai.output.messages']), [{ role: 'assistant', parts: [{ type: 'text', content: 'three' }], finish_reason: '' }])
  assert.equal(ra['gen_ai.output.type'], 'text')
  assert.equal(ra['weave.google_adk.interrupted'], undefined)

  const aa = agentSpan.attributes
  assert.equal(aa['gen_ai.agent.name'], 'calc')
  assert.equal(aa['gen_ai.agent.id'], invocationId)
  assert.equal(aa['gen_ai.agent.description'], 'calc agent')

  const chat = spans[0].attributes
  assert.equal(chat['gen_ai.operation.name'], 'chat')
  assert.equal(chat['gen_ai.request.model'], 'scripted-model')
  assert.equal(chat['gen_ai.agent.name'], 'calc')
  assert.equal(chat['gen_ai.request.temperature'], 0.25)
  assert.equal(chat['gen_ai.request.max_tokens'], 64)
  assert.deepEqual(chat['gen_ai.request.stop_sequences'], ['END'])
  const defs = parse(chat['gen_ai.tool.definitions'])
  assert.equal(defs.length, 1)
  assert.equal(defs[0].name, 'add')
  assert.equal(defs[0].description, 'Adds two numbers')
  assert.equal(defs[0].type, 'function')
  assert.ok('parameters' in defs[0])
  assert.ok(parse(chat['gen_ai.system_instructions'])[0].content.includes('Be exact.'))
  assert.deepEqual(parse(chat['gen_ai.input.messages']), [{ role: 'user', parts: [{ type: 'text', content: 'add 1 and 2' }] }])
  const out = parse(chat['gen_ai.output.messages'])
  assert.equal(out[0].role, 'assistant')
  assert.equal(out[0].parts[0].type, 'tool_call')
  assert.equal(out[0].parts[0].name, 'add')
  assert.deepEqual(out[0].parts[0].arguments, { a: 1, b: 2 })

  const second = parse(spans[2].attributes['gen_ai.input.messages'])
  assert.equal(second.length, 3)
  assert.equal(second[2].parts[0].type, 'tool_call_response')
  assert.deepEqual(second[2].parts[0].response, { sum: 3 })

  const tool = spans[1].attributes
  const callId = events.find((e) => e.content?.parts?.[0]?.functionCall).content.parts[0].functionCall.id
  assert.equal(tool['gen_ai.operation.name'], 'execute_tool')
  assert.equal(tool['gen_ai.tool.name'], 'add')
  assert.equal(tool['gen_ai.agent.name'], 'calc')
  assert.equal(tool['gen_ai.tool.call.id'], callId)
  assert.deepEqual(parse(tool['gen_ai.tool.call.arguments']), { a: 1, b: 2 })
  assert.deepEqual(parse(tool['gen_ai.tool.call.result']), { sum: 3 })
  assert.equal(tracing.openInvocationCount, 0)
})

test('each invocation is a new trace', async () => {
  const { tracing, runner } = traced(agent('a', ['one', 'two']))
  const { sessionId } = await runOnce(runner, 'first')
  await runOnce(runner, 'second', { sessionId })
  const roots = tracing.getFinishedSpans().filter((s) => s.parentSpanId === undefined)
  assert.equal(roots.length, 2)
  assert.notEqual(roots[0].traceId, roots[1].traceId)
})

test('a model error marks the chat span and the root', async () => {
  const { tracing, runner } = traced(agent('a', [new Error('model down')]))
  await runOnce(runner)
  const spans = tracing.getFinishedSpans()
  const chat = one(spans, 'chat scripted-model')
  assert.equal(chat.status.code, 2)
  assert.equal(chat.status.message, 'model down')
  assert.equal(chat.attributes['error.type'], 'Error')
  const root = rootOf(spans)
  assert.equal(root.status.code, 2)
  assert.equal(root.attributes['error.type'], 'UNKNOWN_ERROR')
  assert.equal(root.status.message, 'model down')
  assert.equal(root.attributes['weave.google_adk.interrupted'], undefined)
})

test('a cached beforeModelCallback response closes the chat span with its event', async () => {
  const cache = plugin('cache', {
    beforeModelCallback: async () => ({ content: { role: 'model', parts: [{ text: 'cached answer' }] } }),
  })
  const { tracing, runner } = traced(agent('a', ['never used']), { plugins: [cache] })
  const { events } = await runOnce(runner)
  assert.equal(events.at(-1).content.parts[0].text, 'cached answer')
  const spans = tracing.getFinishedSpans()
  const chat = one(spans, 'chat scripted-model')
  assert.equal(chat.attributes['weave.google_adk.interrupted'], undefined)
  assert.deepEqual(parse(chat.attributes['gen_ai.output.messages'])[0].parts, [{ type: 'text', content: 'cached answer' }])
  // closed when the event arrived, before the invocation ended
  assert.ok(chat.endTimeUnixNano <= rootOf(spans).endTimeUnixNano)
  assert.equal(spans.indexOf(chat), 0)
})

// The event is the response ADK did not pass to afterModelCallback: the span
// shows it as it would have (tracing.md, Model attributes "on the response").
test('a cached response with a finish reason, usage or an error code shows them on the chat span', async () => {
  const cached = {
    content: { role: 'model', parts: [{ text: 'cached answer' }] },
    finishReason: 'MAX_TOKENS',
    usageMetadata: { promptTokenCount: 2, candidatesTokenCount: 3, totalTokenCount: 5, thoughtsTokenCount: 1, cachedContentTokenCount: 2 },
  }
  for (const captureContent of [true, false]) {
    const cache = plugin('cache', { beforeModelCallback: async () => cached })
    const { tracing, runner } = traced(agent('a', ['never used']), { plugins: [cache], captureContent })
    await runOnce(runner)
    const chat = one(tracing.getFinishedSpans(), 'chat scripted-model')
    assert.deepEqual(chat.attributes['gen_ai.response.finish_reasons'], ['max_tokens'])
    assert.deepEqual(
      ['input_tokens', 'output_tokens', 'total_tokens', 'reasoning.output_tokens', 'cache_read.input_tokens'].map((k) => chat.attributes[`gen_ai.usage.${k}`]),
      [2, 3, 5, 1, 2],
    )
    assert.deepEqual(chat.status, { code: 0 })
    const output = chat.attributes['gen_ai.output.messages']
    if (captureContent) assert.equal(parse(output)[0].finish_reason, 'max_tokens')
    else assert.equal(output, undefined)
  }
  const failing = plugin('cache', { beforeModelCallback: async () => ({ errorCode: 'SAFETY', errorMessage: 'blocked', finishReason: 'SAFETY' }) })
  const { tracing, runner } = traced(agent('a', ['never used']), { plugins: [failing] })
  await runOnce(runner)
  const chat = one(tracing.getFinishedSpans(), 'chat scripted-model')
  assert.deepEqual([chat.status, chat.attributes['error.type']], [{ code: 2, message: 'blocked' }, 'SAFETY'])
  assert.deepEqual(chat.attributes['gen_ai.response.finish_reasons'], ['safety'])
})

test('streaming partials make one chat span with the final output', async () => {
  const root = agent('a', ['final answer'], { partials: ['fin', 'final ans'] })
  const { tracing, runner } = traced(root)
  const { events } = await runOnce(runner)
  assert.ok(events.some((e) => e.partial), 'the run streamed partials')
  const spans = tracing.getFinishedSpans()
  const chat = one(spans, 'chat scripted-model')
  assert.deepEqual(parse(chat.attributes['gen_ai.output.messages'])[0].parts, [{ type: 'text', content: 'final answer' }])
  assert.deepEqual(parse(rootOf(spans).attributes['gen_ai.output.messages'])[0].parts, [{ type: 'text', content: 'final answer' }])
})

test('a tool error marks the tool span; the later afterToolCallback keeps it', async () => {
  let afterToolCalls = 0
  const recorder = plugin('recorder', {
    afterToolCallback: async () => {
      afterToolCalls++
    },
  })
  const root = agent('a', [call('fail', {}), 'sorry'], { tools: [failingTool('kaput')] })
  const { tracing, runner } = traced(root, { before: [recorder] })
  const { events } = await runOnce(runner)
  assert.equal(afterToolCalls, 1)
  const fr = events.find((e) => e.content?.parts?.[0]?.functionResponse).content.parts[0].functionResponse
  assert.match(fr.response.error, /kaput/)
  const spans = tracing.getFinishedSpans()
  const tool = one(spans, 'execute_tool fail')
  assert.equal(tool.status.code, 2)
  assert.match(tool.status.message, /kaput/)
  assert.equal(tool.attributes['error.type'], 'Error')
  assert.equal(tool.attributes['gen_ai.tool.call.result'], undefined)
  assert.equal(tool.attributes['weave.google_adk.interrupted'], undefined)
  // ended when the function response event came, before the second model call
  const chats = byName(spans, 'chat scripted-model')
  assert.ok(tool.endTimeUnixNano <= chats[1].startTimeUnixNano)
  assert.ok(spans.indexOf(tool) < spans.indexOf(chats[1]))
})

test('sequential workflow of two agents: agent spans nest and the first closes when the second starts', async () => {
  const first = agent('first', ['one'])
  const second = agent('second', [call('add', { a: 2, b: 2 }), 'four'], { tools: [addTool()] })
  const seq = new SequentialAgent({ name: 'pipeline', description: 'two steps', subAgents: [first, second] })
  const { tracing, runner } = traced(seq)
  await runOnce(runner)
  const spans = tracing.getFinishedSpans()
  const root = rootOf(spans)
  assert.equal(root.name, 'invoke_agent pipeline')
  // the root and the root agent's own span share the name
  const pipelines = byName(spans, 'invoke_agent pipeline')
  assert.equal(pipelines.length, 2)
  const pipeAgent = pipelines.find((s) => s.parentSpanId === root.spanId)
  assert.ok(pipeAgent)
  const a = one(spans, 'invoke_agent first')
  const b = one(spans, 'invoke_agent second')
  assert.equal(a.parentSpanId, pipeAgent.spanId)
  assert.equal(b.parentSpanId, pipeAgent.spanId)
  const chats = byName(spans, 'chat scripted-model')
  assert.equal(chats.length, 3)
  assert.equal(chats[0].parentSpanId, a.spanId)
  assert.equal(chats[1].parentSpanId, b.spanId)
  assert.equal(one(spans, 'execute_tool add').parentSpanId, b.spanId)
  // 'first' demonstrably finished when 'second' became active
  assert.ok(spans.indexOf(a) < spans.indexOf(chats[1]))
  assert.ok(a.endTimeUnixNano <= chats[1].startTimeUnixNano)
  assert.equal(spans.at(-1), root)
  assert.equal(tracing.openInvocationCount, 0)
})

test('an ADK 2.0.0 Workflow root is traced under a root named invoke_agent', needsAdk2, async () => {
  const inner = agent('calc', [call('add', { a: 1, b: 1 }), 'two'], { tools: [addTool()] })
  const wf = new Workflow({ name: 'wf', edges: [[START, inner]] })
  const { tracing, runner } = traced(wf)
  const { events } = await runOnce(runner)
  assert.ok(events.length > 0)
  const spans = tracing.getFinishedSpans()
  const root = rootOf(spans)
  assert.equal(root.name, 'invoke_agent')
  const calc = one(spans, 'invoke_agent calc')
  assert.equal(calc.parentSpanId, root.spanId)
  assert.equal(byName(spans, 'chat scripted-model').length, 2)
  assert.equal(one(spans, 'execute_tool add').parentSpanId, calc.spanId)
  // the agent's tree is learnt from its callbacks: description and model
  assert.equal(calc.attributes['gen_ai.agent.description'], 'calc agent')
  assert.equal(tracing.openInvocationCount, 0)
})

test('a Workflow agent node ends its span when the node completes, not at the run end', needsAdk2, async () => {
  // ADK 2.0.0 dispatches no agent callbacks for a Workflow's agents; the
  // node callbacks say when one finished (tracing.md, "do better" 4).
  const first = agent('first', [call('add', { a: 1, b: 2 }), 'three'], { tools: [addTool()] })
  const later = async () => {
    await new Promise((resolve) => setTimeout(resolve, 30))
    return 'second says'
  }
  const second = agent('second', [later])
  const step = function step() {
    return 'stepped'
  }
  const wf = new Workflow({ name: 'wf', edges: [[START, first], [first, step], [step, second]] })
  const { tracing, runner } = traced(wf)
  await runOnce(runner)
  const spans = tracing.getFinishedSpans()
  const root = rootOf(spans)
  const a = one(spans, 'invoke_agent first')
  const b = one(spans, 'invoke_agent second')
  const chats = byName(spans, 'chat scripted-model')
  assert.equal(chats.length, 3)
  assert.equal(chats[2].parentSpanId, b.spanId)
  // 'first' ended when its node completed: before 'second' began, its tool
  // span and chats inside it
  assert.ok(a.endTimeUnixNano <= chats[2].startTimeUnixNano)
  assert.ok(one(spans, 'execute_tool add').endTimeUnixNano <= a.endTimeUnixNano)
  for (const c of chats.slice(0, 2)) assert.ok(c.endTimeUnixNano <= a.endTimeUnixNano)
  assert.ok(spans.indexOf(a) < spans.indexOf(chats[2]))
  // the function node has no span; nothing is flagged interrupted
  assert.deepEqual(
    spans.map((s) => s.name).sort(),
    ['chat scripted-model', 'chat scripted-model', 'chat scripted-model', 'execute_tool add', 'invoke_agent', 'invoke_agent first', 'invoke_agent second'],
  )
  for (const s of spans) assert.equal(s.attributes['weave.google_adk.interrupted'], undefined)
  assert.equal(spans.at(-1), root)
  assert.equal(tracing.openInvocationCount, 0)
})

test("a node run another plugin answered from its cache does not hold the agent's later spans open", needsAdk2, async () => {
  // a -> gate -> a -> gate -> a -> gate -> fin. A plugin after this one
  // answers a's first node run from its cache (ADK then calls no
  // afterNodeCallback for it); each real run of a still ends its span when
  // its node completes, before fin's 40 ms.
  const { createEvent } = adk
  let passes = 0
  const a = agent('a', ['a1', 'a2'])
  const gate = function gate() {
    passes++
    return createEvent({ author: 'gate', route: passes < 3 ? 'again' : 'done', output: passes })
  }
  const fin = async function fin() {
    await new Promise((resolve) => setTimeout(resolve, 40))
    return 'fin'
  }
  const wf = new Workflow({ name: 'wf', edges: [[START, a], [a, gate], [gate, { again: a, done: fin }]] })
  let runsOfA = 0
  const cache = plugin('node_cache', {
    beforeNodeCallback: async ({ node }) => (node.name === 'a' && runsOfA++ === 0 ? 'cached' : undefined),
  })
  const { tracing, runner } = traced(wf, { plugins: [cache] })
  await runOnce(runner)
  assert.equal(runsOfA, 3)
  const spans = tracing.getFinishedSpans()
  const root = rootOf(spans)
  const spansOfA = byName(spans, 'invoke_agent a')
  assert.equal(spansOfA.length, 2)
  for (const s of spansOfA) assert.ok(root.endTimeUnixNano - s.endTimeUnixNano >= 30_000_000n, `${s.endTimeUnixNano} vs root ${root.endTimeUnixNano}`)
  assert.equal(tracing.openInvocationCount, 0)
})

test("a ParallelWorker's agent span ends when its last item completes, not its first", needsAdk2, async () => {
  const { ParallelWorker } = adk
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
  // The slow item calls a tool, then its model again while the fast item's
  // only call is still going: model spans are kept one per agent name, so
  // the fast call's end leaves the agent looking idle.
  const step = async (req) => {
    const text = JSON.stringify(req.contents)
    if (!text.includes('item-slow')) {
      await sleep(30)
      return 'fast done'
    }
    if (!text.includes('functionResponse')) return call('add', { a: 1, b: 2 })
    await sleep(100)
    return 'slow done'
  }
  const w = agent('w', [step, step, step], { tools: [addTool()] })
  const fanout = function fanout() {
    return ['item-fast', 'item-slow']
  }
  const wf = new Workflow({ name: 'wf', edges: [[START, fanout], [fanout, new ParallelWorker(w)]] })
  const { tracing, runner } = traced(wf)
  await runOnce(runner)
  const spans = tracing.getFinishedSpans()
  const ws = byName(spans, 'invoke_agent w')
  assert.equal(ws.length, 1)
  const chats = byName(spans, 'chat scripted-model')
  assert.equal(chats.length, 3)
  for (const c of chats) assert.equal(c.parentSpanId, ws[0].spanId)
  // The slow item's last call alone took 100 ms, inside the agent's run.
  const ms = Number(ws[0].endTimeUnixNano - ws[0].startTimeUnixNano) / 1e6
  assert.ok(ms >= 100, `the agent span covers the slow item: ${ms} ms`)
  assert.equal(tracing.openInvocationCount, 0)
})

test('a loop re-run of an agent opens a fresh agent span per iteration', async () => {
  const { LoopAgent } = await import('@google/adk')
  const first = agent('drafter', ['draft 1', 'draft 2'])
  const second = agent('critic', ['ok 1', 'ok 2'])
  const loop = new LoopAgent({ name: 'refine', subAgents: [first, second], maxIterations: 2 })
  const { tracing, runner } = traced(loop)
  await runOnce(runner)
  const spans = tracing.getFinishedSpans()
  const drafters = byName(spans, 'invoke_agent drafter')
  const critics = byName(spans, 'invoke_agent critic')
  assert.equal(drafters.length, 2)
  assert.equal(critics.length, 2)
  const chats = byName(spans, 'chat scripted-model')
  assert.equal(chats.length, 4)
  // each chat hangs off the agent span of its own iteration
  assert.equal(chats[0].parentSpanId, drafters[0].spanId)
  assert.equal(chats[1].parentSpanId, critics[0].spanId)
  assert.equal(chats[2].parentSpanId, drafters[1].spanId)
  assert.equal(chats[3].parentSpanId, critics[1].spanId)
  assert.equal(tracing.openInvocationCount, 0)
})

// Message JSON of a real run (tracing.md "Message JSON"): a thought is text,
// inline data a blob without its bytes, parts of other kinds are dropped;
// the reasoning tokens are counted apart.
test('a response with a thought, inline data and executable code: its message parts and usage', async () => {
  const response = {
    content: {
      role: 'model',
      parts: [{ text: 'hmm', thought: true }, { inlineData: { mimeType: 'image/png', data: 'AAAA' } }, { executableCode: { code: 'x' } }, { text: 'answer' }],
    },
    finishReason: 'STOP',
    usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 4, totalTokenCount: 7, thoughtsTokenCount: 1 },
  }
  const { tracing, runner } = traced(agent('a', [response]))
  await runOnce(runner)
  const spans = tracing.getFinishedSpans()
  const chat = one(spans, 'chat scripted-model')
  const expected = [
    {
      role: 'assistant',
      parts: [{ type: 'text', content: 'hmm' }, { type: 'blob', mime_type: 'image/png' }, { type: 'text', content: 'answer' }],
      finish_reason: 'stop',
    },
  ]
  assert.deepEqual(parse(chat.attributes['gen_ai.output.messages']), expected)
  assert.deepEqual(parse(rootOf(spans).attributes['gen_ai.output.messages']), [{ ...expected[0], finish_reason: '' }])
  assert.equal(chat.attributes['gen_ai.usage.reasoning.output_tokens'], 1)
  assert.equal(chat.attributes['gen_ai.usage.output_tokens'], 4)
})

test('an agent whose model is a string: its agent span names the model', async () => {
  // The cached answer spares the model (and its key) any use.
  process.env.GEMINI_API_KEY ??= 'unused'
  const cache = plugin('cache', { beforeModelCallback: async () => ({ content: { role: 'model', parts: [{ text: 'cached' }] } }) })
  const root = new adk.LlmAgent({ name: 'named', model: 'gemini-2.5-flash', description: 'd' })
  const { tracing, runner } = traced(root, { plugins: [cache] })
  await runOnce(runner)
  const spans = tracing.getFinishedSpans()
  const agentSpan = byName(spans, 'invoke_agent named').find((s) => s.parentSpanId !== undefined)
  assert.equal(agentSpan.attributes['gen_ai.request.model'], 'gemini-2.5-flash')
  assert.equal(one(spans, 'chat gemini-2.5-flash').attributes['gen_ai.request.model'], 'gemini-2.5-flash')
})

// Tool spans are keyed by function call id, a duplicate one FIFO per (agent,
// tool) (tracing.md "Tool spans"): parallel branches whose models reuse an
// id (`call_0`, as some providers number calls) keep their own spans.
test('parallel branches given the same call id: each span keeps its own callbacks and response', async () => {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
  const work = new adk.FunctionTool({
    name: 'work',
    description: 'works',
    execute: async ({ who, wait, bad }) => {
      await sleep(wait)
      if (bad) throw new Error(`bad ${who}`)
      return { who }
    },
  })
  // a calls first and fails last; b answers while a's call is still open.
  const a = agent('a', [call('work', { who: 'a', wait: 40, bad: true }, 'call_0'), 'a done'], { tools: [work] })
  const b = agent('b', [call('work', { who: 'b', wait: 5 }, 'call_0'), 'b done'], { tools: [work] })
  const { tracing, runner } = traced(new adk.ParallelAgent({ name: 'par', subAgents: [a, b] }))
  await runOnce(runner)
  const spans = byName(tracing.getFinishedSpans(), 'execute_tool work')
  const of = (name) => spans.find((s) => s.attributes['gen_ai.agent.name'] === name)
  assert.equal(spans.length, 2)
  assert.deepEqual(parse(of('a').attributes['gen_ai.tool.call.arguments']).who, 'a')
  assert.deepEqual([of('a').status.code, of('a').status.message], [2, "Error in tool 'work': bad a"])
  assert.equal(of('a').attributes['gen_ai.tool.call.result'], undefined)
  assert.deepEqual(parse(of('b').attributes['gen_ai.tool.call.arguments']).who, 'b')
  assert.deepEqual(of('b').status, { code: 0 })
  assert.deepEqual(parse(of('b').attributes['gen_ai.tool.call.result']), { who: 'b' })
})

test('an agent outside the root tree, run inside two tool calls: a span under each call, ended within it', async () => {
  // The tool runs the agent in its own invocation (not an AgentTool run):
  // the agent is not in the root's tree, so its span hangs under the call.
  const helper = agent('hidden_helper', ['helped 1', 'helped 2'])
  const delegate = new adk.FunctionTool({
    name: 'delegate',
    description: 'asks the helper',
    execute: async (_args, toolContext) => {
      const ctx = new adk.InvocationContext({ ...toolContext.invocationContext, agent: helper })
      let text = ''
      for await (const ev of helper.runAsync(ctx)) text = ev.content?.parts?.[0]?.text ?? text
      return { text }
    },
  })
  const root = agent('boss', [call('delegate', { n: 1 }), call('delegate', { n: 2 }), 'done'], { tools: [delegate] })
  const { tracing, runner } = traced(root)
  await runOnce(runner)
  const spans = tracing.getFinishedSpans()
  const calls = byName(spans, 'execute_tool delegate')
  const helpers = byName(spans, 'invoke_agent hidden_helper')
  assert.equal(calls.length, 2)
  assert.equal(helpers.length, 2)
  for (const [i, span] of helpers.entries()) {
    const parent = calls.find((c) => c.spanId === span.parentSpanId)
    assert.ok(parent, 'under a tool call')
    assert.equal(parent.attributes['gen_ai.tool.call.arguments'], JSON.stringify({ n: i + 1 }))
    assert.ok(span.startTimeUnixNano >= parent.startTimeUnixNano && span.endTimeUnixNano <= parent.endTimeUnixNano, 'within its call')
    const chat = spans.find((s) => s.name === 'chat scripted-model' && s.parentSpanId === span.spanId)
    assert.match(chat.attributes['gen_ai.output.messages'], new RegExp(`helped ${i + 1}`))
  }
})

test("an agent's empty description ('', ADK's default) is on its agent span as on the root", async () => {
  const root = new adk.SequentialAgent({
    name: 'root',
    subAgents: [
      new adk.LlmAgent({ name: 'plain', model: new ScriptedLlm(['p']) }),
      agent('described', ['d'], { description: 'has one' }),
    ],
  })
  const { tracing, runner } = traced(root)
  await runOnce(runner)
  const spans = tracing.getFinishedSpans()
  const description = (s) => s.attributes['gen_ai.agent.description']
  // ADK 2.0.0 defaults a description to ''; 1.x leaves it undefined (then
  // no span has the attribute).
  const empty = typeof root.subAgents[0].description === 'string' ? root.subAgents[0].description : undefined
  assert.equal(description(rootOf(spans)), empty)
  const agents = spans.filter((s) => s.name.startsWith('invoke_agent') && s.parentSpanId !== undefined)
  assert.deepEqual(Object.fromEntries(agents.map((s) => [s.attributes['gen_ai.agent.name'], description(s)])), { root: empty, plain: empty, described: 'has one' })
})

/** Whether `inner` lies within `outer` in time. */
const within = (inner, outer) => inner.startTimeUnixNano >= outer.startTimeUnixNano && inner.endTimeUnixNano <= outer.endTimeUnixNano

test('a loop over one agent, or over a sequence: each pass gets agent spans of its own (tracing.md, do better 4)', async () => {
  const { LoopAgent, SequentialAgent } = await import('@google/adk')
  const passes = 3
  // Loop[worker]: each pass a tool call and an answer.
  const script = Array.from({ length: passes }, (_, i) => [call('add', { a: i, b: 1 }), `pass ${i}`]).flat()
  const single = new LoopAgent({ name: 'loop', subAgents: [agent('worker', script, { tools: [addTool()] })], maxIterations: passes })
  // Loop[Seq[a, b]].
  const seq = new SequentialAgent({ name: 'seq', subAgents: [agent('a', ['a0', 'a1', 'a2']), agent('b', ['b0', 'b1', 'b2'])] })
  const nested = new LoopAgent({ name: 'loop', subAgents: [seq], maxIterations: passes })
  for (const [root, perPass] of [[single, 'worker'], [nested, 'seq']]) {
    const { tracing, runner } = traced(root)
    await runOnce(runner)
    const spans = tracing.getFinishedSpans()
    const loops = byName(spans, 'invoke_agent loop').filter((s) => s.parentSpanId !== undefined)
    assert.equal(loops.length, 1, 'one span for the loop')
    const runs = byName(spans, `invoke_agent ${perPass}`).sort((p, q) => (p.startTimeUnixNano < q.startTimeUnixNano ? -1 : 1))
    assert.equal(runs.length, passes, `${perPass}: a span per pass`)
    for (const [i, run] of runs.entries()) {
      assert.equal(run.parentSpanId, loops[0].spanId)
      assert.ok(within(run, loops[0]))
      if (i > 0) assert.ok(runs[i - 1].endTimeUnixNano <= run.startTimeUnixNano, 'passes one after another')
      const below = spans.filter((s) => s.parentSpanId === run.spanId)
      for (const s of below) assert.ok(within(s, run), `${s.name} within its pass`)
      if (perPass === 'worker') {
        assert.deepEqual(below.map((s) => s.name).sort(), ['chat scripted-model', 'chat scripted-model', 'execute_tool add'])
        assert.equal(below.find((s) => s.name === 'execute_tool add').attributes['gen_ai.tool.call.arguments'], JSON.stringify({ a: i, b: 1 }))
      } else {
        assert.deepEqual(below.map((s) => s.name).sort(), ['invoke_agent a', 'invoke_agent b'])
      }
    }
    assert.equal(tracing.openInvocationCount, 0)
  }
})

/** Each run's root: its name, agent and description, its agent spans (and
 * whether each hangs right under the root) and the parents of its chat spans. */
function runRoots(spans) {
  return spans
    .filter((s) => s.parentSpanId === undefined)
    .map((root) => {
      const ofRun = spans.filter((s) => s.traceId === root.traceId && s !== root)
      return {
        name: root.name,
        agent: root.attributes['gen_ai.agent.name'],
        description: root.attributes['gen_ai.agent.description'],
        agents: ofRun.filter((s) => s.name.startsWith('invoke_agent')).map((s) => [s.name, s.parentSpanId === root.spanId]),
        chatUnder: ofRun.filter((s) => s.name.startsWith('chat')).map((s) => spans.find((p) => p.spanId === s.parentSpanId)?.name),
      }
    })
}

test("a runner over a sub-agent: the root is the agent that runs, not the top of its tree, for runs side by side and for a run first seen at beforeRunCallback", async () => {
  const sub = agent('sub', ['a', 'b', 'c'], { description: 'the sub-agent' })
  agent('top', [], { subAgents: [sub] })
  const roots = async ({ concurrent, before = [] }) => {
    const { tracing, runner } = traced(sub, { before })
    if (concurrent) await Promise.all([runOnce(runner), runOnce(runner)])
    else await runOnce(runner)
    return runRoots(tracing.getFinishedSpans())
  }
  // The agent spans of the run: only sub's, directly under the root.
  const expected = { name: 'invoke_agent sub', agent: 'sub', description: 'the sub-agent', agents: [['invoke_agent sub', true]], chatUnder: ['invoke_agent sub'] }
  assert.deepEqual(await roots({ concurrent: false }), [expected])
  // The two runs' start callbacks interleave.
  assert.deepEqual(await roots({ concurrent: true }), [expected, expected])
  // A plugin before this one answers onUserMessageCallback: this one first sees the run at beforeRunCallback.
  const replacer = plugin('replacer', { onUserMessageCallback: async () => ({ role: 'user', parts: [{ text: 'replaced' }] }) })
  assert.deepEqual(await roots({ concurrent: false, before: [replacer] }), [expected])
})

test('a resumed session: the root is the agent ADK goes on with (ic.agent at beforeRunCallback, as Weave and ADK name it), with no span for the agent above it, which did not run; runs side by side and a run first seen at beforeRunCallback alike', async () => {
  const secondTurns = async ({ sessions, before = [] }) => {
    const sub = agent('sub', ['hello from sub', 'hello from sub', 'again from sub', 'again from sub'], { description: 'the sub-agent' })
    const top = agent('top', [call('transfer_to_agent', { agentName: 'sub' }), call('transfer_to_agent', { agentName: 'sub' })], { subAgents: [sub] })
    const { tracing, runner } = traced(top, { before })
    // Turn 1 of each session: top hands over to sub, which answers.
    const ids = []
    for (let i = 0; i < sessions; i++) ids.push((await runOnce(runner)).sessionId)
    const firstTurns = new Set(tracing.getFinishedSpans().map((s) => s.traceId))
    // Turn 2: ADK starts at sub.
    await Promise.all(ids.map((sessionId) => runOnce(runner, 'more', { sessionId })))
    return runRoots(tracing.getFinishedSpans().filter((s) => !firstTurns.has(s.traceId)))
  }
  const expected = { name: 'invoke_agent sub', agent: 'sub', description: 'the sub-agent', agents: [['invoke_agent sub', true]], chatUnder: ['invoke_agent sub'] }
  assert.deepEqual(await secondTurns({ sessions: 1 }), [expected])
  assert.deepEqual(await secondTurns({ sessions: 2 }), [expected, expected])
  const replacer = plugin('replacer', { onUserMessageCallback: async () => ({ role: 'user', parts: [{ text: 'replaced' }] }) })
  assert.deepEqual(await secondTurns({ sessions: 1, before: [replacer] }), [expected])
})

test('a resumed session hands over outside its agent: the agents it reaches nest and read as the whole tree says, and the agent above it gets a span only when it runs', async () => {
  const secondTurn = async (subScript) => {
    const sub = agent('sub', ['hello from sub', ...subScript])
    sub.description = undefined
    const helper = agent('helper', ['helper answers'], { description: 'the helper' })
    const peer = agent('peer', [call('transfer_to_agent', { agentName: 'helper' })], { description: 'the peer agent', subAgents: [helper] })
    const top = agent('top', [call('transfer_to_agent', { agentName: 'sub' }), 'top answers'], { subAgents: [sub, peer], description: 'the top agent' })
    const { tracing, runner } = traced(top)
    const { sessionId } = await runOnce(runner)
    const first = new Set(tracing.getFinishedSpans().map((s) => s.traceId))
    await runOnce(runner, 'more', { sessionId })
    const spans = tracing.getFinishedSpans().filter((s) => !first.has(s.traceId))
    const root = spans.find((s) => s.parentSpanId === undefined)
    const named = (id) => (id === root.spanId ? 'ROOT' : spans.find((s) => s.spanId === id)?.name)
    return {
      root: [root.name, root.attributes['gen_ai.agent.description']],
      agents: spans.filter((s) => s !== root && s.name.startsWith('invoke_agent')).map((s) => [s.name, named(s.parentSpanId), s.attributes['gen_ai.agent.description']]),
    }
  }
  // sub (no description of its own: the root keeps none of top's) hands over to its peer, which hands over to its sub-agent.
  assert.deepEqual(await secondTurn([call('transfer_to_agent', { agentName: 'peer' })]), {
    root: ['invoke_agent sub', undefined],
    agents: [
      ['invoke_agent helper', 'invoke_agent peer', 'the helper'],
      ['invoke_agent peer', 'ROOT', 'the peer agent'],
      ['invoke_agent sub', 'ROOT', undefined],
    ],
  })
  // sub hands back to top, which then runs: its span (top has no parent: under the root), with its description.
  assert.deepEqual(await secondTurn([call('transfer_to_agent', { agentName: 'top' })]), {
    root: ['invoke_agent sub', undefined],
    agents: [
      ['invoke_agent top', 'ROOT', 'the top agent'],
      ['invoke_agent sub', 'ROOT', undefined],
    ],
  })
})

test('an agent tree that changes between runs is read again: an added sub-agent nests under its parent, a new description shows', async () => {
  const root = agent('root', ['hello', call('transfer_to_agent', { agentName: 'late' }), 'bye'], { description: 'first' })
  const { tracing, runner } = traced(root)
  await runOnce(runner)
  const late = agent('late', ['late answers'], { description: 'added later' })
  late.parentAgent = root
  root.subAgents.push(late)
  root.description = 'second'
  await runOnce(runner)
  // A run of an unchanged tree after a change: its handle is the new tree's.
  await runOnce(runner)
  const spans = tracing.getFinishedSpans()
  const roots = spans.filter((s) => s.parentSpanId === undefined)
  assert.deepEqual(
    roots.map((r) => r.attributes['gen_ai.agent.description']),
    ['first', 'second', 'second'],
  )
  const lateSpan = one(spans, 'invoke_agent late')
  const parent = spans.find((s) => s.spanId === lateSpan.parentSpanId)
  assert.equal(parent.name, 'invoke_agent root')
  assert.notEqual(parent.parentSpanId, undefined, 'under the root agent span, not the run root')
  assert.equal(lateSpan.attributes['gen_ai.agent.description'], 'added later')
  const agentSpans = spans.filter((s) => s.name === 'invoke_agent root' && s.parentSpanId !== undefined)
  assert.deepEqual(
    agentSpans.map((s) => s.attributes['gen_ai.agent.description']),
    ['first', 'second', 'second'],
  )
})

test('the flat agent tree is the same array while the tree reads the same, and a new one when it changed', async () => {
  const { createRequire } = await import('node:module')
  const { flattenAgentTree } = createRequire(import.meta.url)('../lib/tracing/agents.js')
  const sub = agent('sub', [])
  const root = agent('root', [], { subAgents: [sub] })
  const first = flattenAgentTree(root)
  assert.equal(flattenAgentTree(root), first)
  // A model object swapped for another: the tuples read the same.
  sub.model = new ScriptedLlm([])
  assert.equal(flattenAgentTree(root), first)
  root.subAgents = [sub]
  assert.equal(flattenAgentTree(root), first, 'a new array of the same agents')
  sub.name = 'renamed'
  const renamed = flattenAgentTree(root)
  assert.notEqual(renamed, first)
  assert.equal(renamed[5], 'renamed')
  root.subAgents.pop()
  assert.equal(flattenAgentTree(root).length, 5)
})

test("a response with no finish reason, or an empty one: no finish_reasons, and its output message's finish_reason is '' (as in Weave)", async () => {
  const empty = { content: { role: 'model', parts: [call('add', { a: 1, b: 2 })] }, finishReason: '' }
  const { tracing, runner } = traced(agent('a', [empty, 'three'], { tools: [addTool()] }))
  await runOnce(runner)
  const chats = byName(tracing.getFinishedSpans(), 'chat scripted-model')
  assert.equal(chats.length, 2)
  for (const chat of chats) {
    assert.equal(chat.attributes['gen_ai.response.finish_reasons'], undefined)
    assert.equal(parse(chat.attributes['gen_ai.output.messages'])[0].finish_reason, '')
  }
})

test('tool definitions: parameters, else parametersJsonSchema, else null (a declaration without either, as Weave reads it)', async () => {
  class Declared extends adk.BaseTool {
    constructor(name, declaration) {
      super({ name, description: `${name} tool` })
      this.declaration = declaration
    }
    _getDeclaration() {
      return { name: this.name, description: this.description, ...this.declaration }
    }
    async runAsync() {
      return { ok: true }
    }
  }
  const tools = [
    new Declared('bare', {}),
    new Declared('schema', { parametersJsonSchema: { type: 'object' } }),
    new Declared('nulled', { parameters: null, parametersJsonSchema: { type: 'object', title: 'fallback' } }),
  ]
  const { tracing, runner } = traced(agent('a', ['ok'], { tools }))
  await runOnce(runner)
  const chat = one(tracing.getFinishedSpans(), 'chat scripted-model')
  assert.deepEqual(
    parse(chat.attributes['gen_ai.tool.definitions']).map((d) => [d.name, d.parameters]),
    [
      ['bare', null],
      ['schema', { type: 'object' }],
      ['nulled', { type: 'object', title: 'fallback' }],
    ],
  )
})

test("a response's interactionId and modelVersion: gen_ai.response.id and gen_ai.response.model on its chat span (as Weave writes them)", async () => {
  const answer = { content: { role: 'model', parts: [{ text: 'hi' }] }, finishReason: 'STOP', interactionId: 'resp-123', modelVersion: 'gemini-2.5-flash-001' }
  const { tracing, runner } = traced(agent('a', [answer, 'plain']))
  await runOnce(runner)
  await runOnce(runner)
  const chats = byName(tracing.getFinishedSpans(), 'chat scripted-model')
  assert.deepEqual(
    chats.map((c) => [c.attributes['gen_ai.response.id'], c.attributes['gen_ai.response.model']]),
    [
      ['resp-123', 'gemini-2.5-flash-001'],
      [undefined, undefined],
    ],
  )
})
