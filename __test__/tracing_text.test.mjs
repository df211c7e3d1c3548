// The native tracer reads short string arguments in one pass into a stack
// buffer and long ones through napi-rs: both must give back exactly the
// JavaScript text (non-ASCII, emoji, lone surrogates -> U+FFFD, and the
// lengths around the switch between the two readings).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import v8 from 'node:v8'
import vm from 'node:vm'

const require = createRequire(import.meta.url)
const native = require('../binding.js')
const { NativeTracer } = native
// The callback functions take the tracer's handle: call(t, 'beforeTool', ...)
// is native.tracerBeforeTool(t.handle, ...).
const call = (t, name, ...args) => native[`tracer${name[0].toUpperCase()}${name.slice(1)}`](t.handle, ...args)

function toolSpan(toolName, argsJson) {
  const t = new NativeTracer({ exporter: 'memory' }, () => {})
  call(t, 'startInvocation', 'inv', 'sess', 'app', 'user', 'agent', undefined, 0, ['agent', '', '', '', ''], undefined, true, false)
  call(t, 'beforeTool', 'inv', 'agent', toolName, 'call-1', argsJson)
  call(t, 'afterTool', 'inv', 'agent', toolName, 'call-1')
  call(t, 'finish', 'inv', false)
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
  call(t, 'startInvocation', 'inv', 'sess', 'app', 'user', 'root', 'the root', handle, undefined, undefined, true, false)
  call(t, 'beforeTool', 'inv', 'child', 'tool', 'c1', '{}')
  call(t, 'afterTool', 'inv', 'child', 'tool', 'c1')
  call(t, 'finish', 'inv', false)
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
  assert.throws(() => call(t, 'beforeAgent', 42, 'agent'))
  call(t, 'startInvocation', 'inv', undefined, undefined, undefined, 'agent', undefined, 0, undefined, undefined, true, false)
  assert.equal(t.openInvocationCount, 1)
  assert.equal(call(t, 'finish', 'inv', false), 0)
})

test('a handle reaches only its own tracer, and none once the tracer is collected', async () => {
  const a = new NativeTracer({ exporter: 'memory' }, () => {})
  const b = new NativeTracer({ exporter: 'memory' }, () => {})
  assert.notEqual(a.handle, b.handle)
  call(a, 'startInvocation', 'inv', undefined, undefined, undefined, 'agent', undefined, 0, undefined, undefined, true, false)
  assert.equal(a.openInvocationCount, 1)
  assert.equal(b.openInvocationCount, 0)
  assert.throws(() => native.tracerFinish(0, 'inv', false), /no such native tracer/)
  v8.setFlagsFromString('--expose-gc')
  const gc = vm.runInNewContext('gc')
  let gone = new NativeTracer({ exporter: 'none' }, () => {})
  const handle = gone.handle
  gone = undefined
  for (let i = 0; i < 10 && !threwFor(handle); i++) {
    await new Promise((r) => setImmediate(r))
    gc()
  }
  assert.ok(threwFor(handle), 'the handle of a collected tracer is let go')
})

function threwFor(handle) {
  try {
    native.tracerFinish(handle, 'x', false)
    return false
  } catch {
    return true
  }
}
