// The native tracer reads short string arguments in one pass into a stack
// buffer and long ones through napi-rs: both must give back exactly the
// JavaScript text (non-ASCII, emoji, lone surrogates -> U+FFFD, and the
// lengths around the switch between the two readings).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { NativeTracer } = require('../binding.js')

function toolSpan(toolName, argsJson) {
  const t = new NativeTracer({ exporter: 'memory' }, () => {})
  t.startInvocation('inv', 'sess', 'app', 'user', 'agent', undefined, 0, ['agent', '', '', '', ''], undefined, true, false)
  t.beforeTool('inv', 'agent', toolName, 'call-1', argsJson)
  t.afterTool('inv', 'agent', toolName, 'call-1')
  t.finish('inv', false)
  const spans = JSON.parse(t.finishedSpansJson())
  return spans.find((s) => s.name.startsWith('execute_tool'))
}

test('string arguments arrive unchanged, short and long, ASCII or not', () => {
  const pieces = ['a', 'é', '中', '😀']
  // 4096 bytes of stack hold up to 1365 UTF-16 units, the 256 KiB
  // per-thread buffer up to 87381: cover both sides of each.
  for (const units of [0, 1, 40, 1364, 1365, 1366, 5000, 87381, 87382]) {
    for (const p of pieces) {
      const text = p.repeat(Math.ceil(units / p.length)).slice(0, units || 0)
      const name = `tool_${p}_${units}`
      const args = JSON.stringify({ text })
      const span = toolSpan(name, args)
      assert.equal(span.name, `execute_tool ${name}`)
      assert.equal(span.attributes['gen_ai.tool.name'], name)
      assert.equal(span.attributes['gen_ai.tool.call.arguments'], args, `${p} x ${units}`)
    }
  }
})

test('a registered agent tree stands for the flat one at the start of a run', () => {
  const t = new NativeTracer({ exporter: 'memory' }, () => {})
  const handle = t.registerTree(['root', '', 'the root', '', '', 'child', 'root', 'a child', 'm', ''])
  assert.ok(handle > 0)
  t.startInvocation('inv', 'sess', 'app', 'user', 'root', 'the root', handle, undefined, undefined, true, false)
  t.beforeTool('inv', 'child', 'tool', 'c1', '{}')
  t.afterTool('inv', 'child', 'tool', 'c1')
  t.finish('inv', false)
  const spans = JSON.parse(t.finishedSpansJson())
  const child = spans.find((s) => s.name === 'invoke_agent child')
  assert.ok(child, spans.map((s) => s.name).join(', '))
  assert.equal(child.attributes['gen_ai.agent.description'], 'a child')
  const parent = spans.find((s) => s.spanId === child.parentSpanId)
  assert.equal(parent?.name, 'invoke_agent root', 'the child hangs under its parent')
})

test('a lone surrogate becomes U+FFFD', () => {
  const span = toolSpan('t\uD800x', '{}')
  assert.equal(span.attributes['gen_ai.tool.name'], 't\uFFFDx')
})

test('a non-string where a string is required throws, and the tracer goes on', () => {
  const t = new NativeTracer({ exporter: 'memory' }, () => {})
  assert.throws(() => t.beforeAgent(42, 'agent'))
  t.startInvocation('inv', undefined, undefined, undefined, 'agent', undefined, 0, undefined, undefined, true, false)
  assert.equal(t.openInvocationCount, 1)
  assert.equal(t.finish('inv', false), 0)
})
