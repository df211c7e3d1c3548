// The benchmark's JavaScript comparator (bench/baselines/otel_js_pipeline.mjs)
// must do the same work as TracingPlugin for the benchmark to mean anything:
// through a real InMemoryRunner it exports, over OTLP/HTTP protobuf, the five
// spans of a scripted run with the tree and GenAI attributes of tracing.md.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { FunctionTool, InMemoryRunner, LlmAgent } from '@google/adk'
import { ScriptedLlm, call, runOnce } from './helpers/scripted_llm.mjs'
import { startReceiver } from './helpers/otlp_receiver.mjs'
import { OtelJsPipelinePlugin, toJsonSafe } from '../bench/baselines/otel_js_pipeline.mjs'

function setup(rx, script) {
  const llm = new ScriptedLlm(script)
  const lookup = new FunctionTool({
    name: 'lookup',
    description: 'Looks up the weather.',
    parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } } },
    execute: async ({ city }) => {
      if (city === 'Atlantis') throw new TypeError('no such city')
      return { city, weather: 'sunny' }
    },
  })
  const agent = new LlmAgent({ name: 'weather_agent', description: 'Answers weather.', model: llm, instruction: 'Be brief.', tools: [lookup] })
  const plugin = new OtelJsPipelinePlugin({ endpoint: rx.endpoint, serviceName: 'comparator-test', batch: { scheduledDelayMillis: 20 } })
  const runner = new InMemoryRunner({ agent, appName: 'cmp', plugins: [plugin] })
  return { runner, plugin }
}

describe('OTel JS comparator plugin', () => {
  let rx
  before(async () => {
    rx = await startReceiver()
  })
  after(async () => {
    await rx.stop()
  })

  test('one scripted run exports root, agent, chat, execute_tool, chat with the right tree', async () => {
    rx.reset()
    const { runner, plugin } = setup(rx, [call('lookup', { city: 'Paris' }), 'Sunny in Paris.'])
    const { sessionId } = await runOnce(runner, 'Weather in Paris?')
    await plugin.forceFlush()
    const spans = await rx.waitForSpans(5, 5000)
    await plugin.shutdown()

    assert.deepEqual(spans.map((s) => s.name).sort(), [
      'chat scripted-model', 'chat scripted-model', 'execute_tool lookup', 'invoke_agent weather_agent', 'invoke_agent weather_agent',
    ])
    const root = spans.find((s) => !s.parentSpanId)
    assert.ok(root, 'one root')
    const agent = spans.find((s) => s.parentSpanId === root.spanId)
    assert.equal(agent.name, 'invoke_agent weather_agent')
    const children = spans.filter((s) => s.parentSpanId === agent.spanId)
    assert.deepEqual(children.map((s) => s.name).sort(), ['chat scripted-model', 'chat scripted-model', 'execute_tool lookup'])
    for (const s of spans) assert.equal(s.traceId, root.traceId)

    assert.equal(root.attributes['gen_ai.operation.name'], 'invoke_agent')
    assert.equal(root.attributes['gen_ai.conversation.id'], sessionId)
    assert.deepEqual(JSON.parse(root.attributes['gen_ai.input.messages']), [{ role: 'user', parts: [{ type: 'text', content: 'Weather in Paris?' }] }])
    assert.deepEqual(JSON.parse(root.attributes['gen_ai.output.messages'])[0].parts, [{ type: 'text', content: 'Sunny in Paris.' }])

    const tool = children.find((s) => s.name === 'execute_tool lookup')
    assert.deepEqual(JSON.parse(tool.attributes['gen_ai.tool.call.arguments']), { city: 'Paris' })
    assert.deepEqual(JSON.parse(tool.attributes['gen_ai.tool.call.result']), { city: 'Paris', weather: 'sunny' })
    assert.match(tool.attributes['gen_ai.tool.call.id'], /.+/)

    const chats = children.filter((s) => s.name.startsWith('chat')).sort((a, b) => (a.startTimeUnixNano < b.startTimeUnixNano ? -1 : 1))
    assert.equal(chats[0].attributes['gen_ai.request.model'], 'scripted-model')
    assert.equal(JSON.parse(chats[0].attributes['gen_ai.output.messages'])[0].parts[0].type, 'tool_call')
    assert.equal(JSON.parse(chats[0].attributes['gen_ai.tool.definitions'])[0].name, 'lookup')
    assert.ok(chats[1].attributes['gen_ai.input.messages'].includes('tool_call_response'))
    assert.equal(rx.requests[0].contentType, 'application/x-protobuf')
    assert.equal(rx.spans[0].resource['service.name'], 'comparator-test')
  })

  test('each invocation is its own trace; a failing tool is ERROR with its message', async () => {
    rx.reset()
    const { runner, plugin } = setup(rx, [call('lookup', { city: 'Atlantis' }), 'Sorry.', call('lookup', { city: 'Rome' }), 'Sunny.'])
    await runOnce(runner, 'Atlantis?').catch(() => {})
    await runOnce(runner, 'Rome?')
    await plugin.forceFlush()
    const spans = await rx.waitForSpans(5, 5000)
    await plugin.shutdown()
    const roots = spans.filter((s) => !s.parentSpanId)
    assert.equal(roots.length, 2)
    assert.notEqual(roots[0].traceId, roots[1].traceId)
    const failed = spans.find((s) => s.name === 'execute_tool lookup' && s.status.code === 2)
    assert.ok(failed, 'an ERROR tool span')
    assert.match(failed.status.message, /no such city/)
    assert.match(failed.attributes['error.type'], /Error$/)
    assert.equal(plugin.invocations.size, 0, 'no invocation state left behind')
  })

  test('toJsonSafe: BigInt, functions dropped, and the reference sanitiser\'s shared-reference quirk', () => {
    const shared = { a: 1 }
    const cyclic = { name: 'c' }
    cyclic.self = cyclic
    assert.deepEqual(toJsonSafe({ n: 10n, f: () => 1, shared1: shared, shared2: shared, cyclic }), {
      n: '10',
      shared1: { a: 1 },
      shared2: '[Circular]', // what the reference does; TracingPlugin must not (tracing.md, item 5)
      cyclic: { name: 'c', self: '[Circular]' },
    })
  })
})
