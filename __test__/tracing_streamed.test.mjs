// Streamed model calls (tracing.md "Added: Streamed turns"): with SSE, ADK
// 2.0.0 answers one model call with several non-partial responses; they make
// one chat span that ends at the last of them.
import test from 'node:test'
import assert from 'node:assert/strict'
import { LlmAgent, StreamingMode } from '@google/adk'
import { runOnce } from './helpers/scripted_llm.mjs'
import { chunk, StreamingLlm } from './helpers/streaming_llm.mjs'
import { addTool, failingTool, traced, one, byName, plugin, newSession, request, rootOf } from './helpers/tracing_helpers.mjs'
import { ReflectAndRetryToolPlugin } from '../index.js'
import { needsAdk2 } from './helpers/adk_version.mjs'

const SSE = { runConfig: { streamingMode: StreamingMode.SSE } }
const parse = (s) => JSON.parse(s)
const ms = (ns) => Number(ns) / 1e6

/** Text, then a function call, then (after the tools ran) a usage-only close. */
function textThenCall() {
  return [
    chunk([{ text: 'Let me ' }], { usage: { promptTokenCount: 10, totalTokenCount: 10 } }),
    chunk([{ text: 'add that.' }], { usage: { promptTokenCount: 10, candidatesTokenCount: 3, totalTokenCount: 13 } }),
    chunk([{ functionCall: { name: 'add', args: { a: 1, b: 2 }, id: 'fc-1' } }], {
      usage: { promptTokenCount: 10, candidatesTokenCount: 8, totalTokenCount: 18, cachedContentTokenCount: 4 },
    }),
    { wait: 30 },
    chunk([{ text: '' }], { finishReason: 'STOP', usage: { promptTokenCount: 10, candidatesTokenCount: 9, totalTokenCount: 19 } }),
  ]
}

function finalText() {
  return [
    chunk([{ text: 'The sum ' }]),
    chunk([{ text: 'is 3.' }], { finishReason: 'STOP', usage: { promptTokenCount: 30, candidatesTokenCount: 4, totalTokenCount: 34 } }),
  ]
}

function calculator(calls) {
  return new LlmAgent({ name: 'calc', description: 'adds', model: new StreamingLlm(calls), tools: [addTool()] })
}

const int = (span, key) => span.attributes[key]

test('SSE: text then a function call make one chat span that ends at the last response', needsAdk2, async () => {
  // Holds the run after the usage-only event, so the agent's next model
  // call (which shows the first is over) comes well after its last response.
  const slow = plugin('slow', {
    onEventCallback: async ({ event }) => {
      if (!event.partial && event.content === undefined && event.usageMetadata) await new Promise((r) => setTimeout(r, 25))
    },
  })
  const { tracing, runner } = traced(calculator([textThenCall(), finalText()]), { plugins: [slow] })
  const { events } = await runOnce(runner, 'add 1 and 2', SSE)
  // ADK's own streaming shape: the text and the call are separate responses.
  const nonPartial = events.filter((e) => !e.partial && e.author === 'calc')
  assert.deepEqual(nonPartial.map((e) => e.content?.parts?.map((p) => Object.keys(p)[0]) ?? 'usage-only'), [
    ['text'],
    ['functionCall'],
    ['functionResponse'],
    'usage-only',
    ['text'],
  ])

  const spans = tracing.getFinishedSpans()
  const chats = byName(spans, 'chat streaming-model')
  assert.equal(chats.length, 2)
  const [first, second] = chats.sort((a, b) => Number(a.startTimeUnixNano - b.startTimeUnixNano))
  const tool = one(spans, 'execute_tool add')
  // The root is named like the agent span; the agent span is its child.
  const agentSpan = byName(spans, 'invoke_agent calc').find((s) => s.parentSpanId !== undefined)

  assert.deepEqual(parse(first.attributes['gen_ai.output.messages']), [
    {
      role: 'assistant',
      parts: [
        { type: 'text', content: 'Let me add that.' },
        { type: 'tool_call', id: 'fc-1', name: 'add', arguments: { a: 1, b: 2 } },
      ],
      finish_reason: 'stop',
    },
  ])
  assert.deepEqual(first.attributes['gen_ai.response.finish_reasons'], ['stop'])
  // The whole usageMetadata of the last response that has one.
  assert.equal(int(first, 'gen_ai.usage.input_tokens'), 10)
  assert.equal(int(first, 'gen_ai.usage.output_tokens'), 9)
  assert.equal(int(first, 'gen_ai.usage.total_tokens'), 19)
  assert.equal(int(first, 'gen_ai.usage.cache_read.input_tokens'), undefined)
  assert.equal(first.attributes['weave.google_adk.interrupted'], undefined)
  assert.equal(first.parentSpanId, agentSpan.spanId)

  // The usage-only response came after the tool ran (and the stream's pause).
  assert.ok(first.startTimeUnixNano <= tool.startTimeUnixNano)
  assert.ok(ms(first.endTimeUnixNano - tool.endTimeUnixNano) >= 20, `${ms(first.endTimeUnixNano - tool.endTimeUnixNano)} ms`)
  // It ends at that response, not when the next model call closed it.
  assert.ok(ms(second.startTimeUnixNano - first.endTimeUnixNano) >= 20, `${ms(second.startTimeUnixNano - first.endTimeUnixNano)} ms`)
  assert.equal(tool.attributes['gen_ai.tool.call.result'], JSON.stringify({ sum: 3 }))

  assert.deepEqual(parse(second.attributes['gen_ai.output.messages']), [
    { role: 'assistant', parts: [{ type: 'text', content: 'The sum is 3.' }], finish_reason: 'stop' },
  ])
  assert.equal(int(second, 'gen_ai.usage.input_tokens'), 30)
  assert.equal(int(second, 'gen_ai.usage.output_tokens'), 4)
  assert.equal(second.attributes['weave.google_adk.interrupted'], undefined)
  assert.ok(second.endTimeUnixNano <= agentSpan.endTimeUnixNano)
  assert.equal(tracing.openInvocationCount, 0)
})

test('the same model without streaming: one response per call, ended at it', async () => {
  const { tracing, runner } = traced(calculator([textThenCall(), finalText()]))
  await runOnce(runner, 'add 1 and 2')
  const spans = tracing.getFinishedSpans()
  const [first] = byName(spans, 'chat streaming-model').sort((a, b) => Number(a.startTimeUnixNano - b.startTimeUnixNano))
  const tool = one(spans, 'execute_tool add')
  assert.deepEqual(
    parse(first.attributes['gen_ai.output.messages'])[0].parts.map((p) => p.type),
    ['text', 'text', 'tool_call'],
  )
  assert.equal(int(first, 'gen_ai.usage.output_tokens'), 9)
  assert.ok(first.endTimeUnixNano <= tool.startTimeUnixNano)
})

test('SSE: a run cut off inside a split turn flags its chat span interrupted; a finished call is not', needsAdk2, async () => {
  const { tracing, runner } = traced(calculator([textThenCall(), finalText()]))
  const sessionId = await newSession(runner)
  let invocationId
  // The consumer stops at the text of the split turn: the call never finished.
  for await (const ev of runner.runAsync({ ...request(sessionId, 'add'), ...SSE })) {
    invocationId = ev.invocationId
    if (!ev.partial && ev.content?.parts?.[0]?.text) break
  }
  tracing.finishInterruptedInvocation(invocationId)
  const cut = one(tracing.getFinishedSpans(), 'chat streaming-model')
  assert.equal(cut.attributes['weave.google_adk.interrupted'], true)
  assert.deepEqual(parse(cut.attributes['gen_ai.output.messages'])[0].parts, [{ type: 'text', content: 'Let me add that.' }])
  assert.equal(cut.attributes['gen_ai.response.finish_reasons'], undefined)

  // A text answer streamed to its end, then the consumer stops: the model
  // said it was done, so the call is complete.
  const second = traced(calculator([finalText()]))
  const sid2 = await newSession(second.runner)
  let id2
  for await (const ev of second.runner.runAsync({ ...request(sid2, 'hi'), ...SSE })) {
    id2 = ev.invocationId
    if (!ev.partial) break
  }
  const before = process.hrtime.bigint()
  await new Promise((r) => setTimeout(r, 20))
  second.tracing.finishInterruptedInvocation(id2)
  const done = one(second.tracing.getFinishedSpans(), 'chat streaming-model')
  assert.equal(done.attributes['weave.google_adk.interrupted'], undefined)
  assert.deepEqual(done.attributes['gen_ai.response.finish_reasons'], ['stop'])
  assert.ok(done.endTimeUnixNano > 0n)
  // Ended at its response, not when the run was finished.
  const wallBefore = BigInt(Date.now()) * 1000000n - (process.hrtime.bigint() - before)
  assert.ok(done.endTimeUnixNano <= wallBefore + 5000000n)
})

// A failed tool call reaches onModelErrorCallback too (ADK reports errors of
// the model's function calls as the model's), and with SSE it comes while
// the turn that asked for the call is still open: the turn is not failed by
// it, as a call that does not stream is not (its span ended before the tools
// ran). The tool's span and the root carry the error.
for (const [what, tools, plugins, toolName] of [
  ['a tool error rethrown past the retry limit', () => [failingTool('nope')], () => [new ReflectAndRetryToolPlugin({ maxRetries: 0 })], 'fail'],
  ['a tool name the model invented', () => [addTool()], () => [], 'ghost'],
]) {
  for (const streamed of [true, false]) {
    test(`${streamed ? 'SSE' : 'no streaming'}: ${what} does not fail the chat span`, needsAdk2, async () => {
      const asks = [chunk([{ text: 'Let me try.' }]), chunk([{ functionCall: { name: toolName, args: {}, id: 'fc-1' } }], { finishReason: 'STOP' })]
      const model = new StreamingLlm([asks, [chunk([{ text: 'It failed.' }], { finishReason: 'STOP' })]])
      const root = new LlmAgent({ name: 'calc', description: 'adds', model, tools: tools() })
      const { tracing, runner } = traced(root, { plugins: plugins() })
      await runOnce(runner, 'try', streamed ? SSE : {})
      const spans = tracing.getFinishedSpans()
      const chats = byName(spans, 'chat streaming-model')
      assert.equal(chats.length, 2)
      assert.deepEqual(chats.map((s) => s.status), [{ code: 0 }, { code: 0 }])
      assert.equal(rootOf(spans).status.code, 2)
      assert.equal(tracing.openInvocationCount, 0)
    })
  }
}

test('SSE in a loop: a pass whose text comes before its function call stays one agent span', needsAdk2, async () => {
  // The text event of a split turn looks like a final answer until the
  // function call follows: the pass is over only at its last answer.
  const { LoopAgent } = await import('@google/adk')
  const loop = new LoopAgent({ name: 'loop', subAgents: [calculator([textThenCall(), finalText(), textThenCall(), finalText()])], maxIterations: 2 })
  const { tracing, runner } = traced(loop)
  await runOnce(runner, 'add 1 and 2', SSE)
  const spans = tracing.getFinishedSpans()
  const passes = byName(spans, 'invoke_agent calc')
  assert.equal(passes.length, 2)
  for (const pass of passes) {
    const below = spans.filter((s) => s.parentSpanId === pass.spanId).map((s) => s.name).sort()
    assert.deepEqual(below, ['chat streaming-model', 'chat streaming-model', 'execute_tool add'])
  }
  assert.equal(tracing.openInvocationCount, 0)
})

test('SSE with a plugin before this one answering afterModelCallback: the chat span still holds every response of the call', needsAdk2, async () => {
  // The earlier plugin's answer stops the afterModelCallback chain, so those
  // responses reach this plugin only as events (tracing.md: they all belong
  // to that call's chat span, whatever the plugins' order).
  const redactAll = ({ llmResponse }) =>
    llmResponse.partial ? undefined : { ...llmResponse, content: llmResponse.content && { ...llmResponse.content } }
  const redactText = ({ llmResponse }) =>
    llmResponse.partial || !llmResponse.content?.parts?.some((p) => p.text) ? undefined : { ...llmResponse }
  // Gemini often puts the finish reason on the function call's chunk: the
  // call has then said it is done, and its usage-only close still belongs.
  const callDone = () =>
    textThenCall().map((c) =>
      c.candidates?.[0]?.content?.parts?.[0]?.functionCall ? { ...c, candidates: [{ ...c.candidates[0], finishReason: 'STOP' }] } : c,
    )
  const chatsOf = async (before, first) => {
    const { tracing, runner } = traced(calculator([first(), finalText()]), { before })
    await runOnce(runner, 'add 1 and 2', SSE)
    const spans = tracing.getFinishedSpans()
    assert.equal(tracing.openInvocationCount, 0)
    const chats = byName(spans, 'chat streaming-model').sort((p, q) => (p.startTimeUnixNano < q.startTimeUnixNano ? -1 : 1))
    return { chats, tool: one(spans, 'execute_tool add') }
  }
  const keys = ['gen_ai.output.messages', 'gen_ai.response.finish_reasons', 'gen_ai.usage.output_tokens', 'gen_ai.usage.total_tokens']
  const pick = (span) => Object.fromEntries(keys.map((k) => [k, span.attributes[k]]))
  for (const first of [textThenCall, callDone]) {
    const plain = await chatsOf([], first)
    // The usage-only close's counts, on the span of the call it closes.
    assert.equal(plain.chats[0].attributes['gen_ai.usage.output_tokens'], 9)
    for (const answer of [redactAll, redactText]) {
      const { chats, tool } = await chatsOf([plugin('answers', { afterModelCallback: async (p) => answer(p) })], first)
      assert.equal(chats.length, 2)
      assert.deepEqual(chats.map(pick), plain.chats.map(pick), `${first.name}, ${answer.name}`)
      // The first call ended at its last response, after the tool ran.
      assert.ok(chats[0].endTimeUnixNano >= tool.endTimeUnixNano, `${first.name}, ${answer.name}`)
    }
  }
})
