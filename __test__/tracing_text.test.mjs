// The callbacks' strings reach the native tracer as records: short ones in
// one string (read as UTF-16), long ones apart (read as UTF-8). Both must
// give back exactly the JavaScript text (non-ASCII, emoji, lone surrogates
// -> U+FFFD, and the lengths around each switch), and a batch the tracer
// cannot read must not stop it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { exposeGc } from './helpers/gc.mjs'

const require = createRequire(import.meta.url)
const native = require('../binding.js')
const R = require('../lib/tracing/records.js')
const { NativeTracer } = native

/** Writes records with `write(r)` and applies them to tracer `t` (or handle). */
function apply(t, write) {
  const r = new R.Records()
  write(r)
  const handle = typeof t === 'number' ? t : t.handle
  return r.take((nums, n, text, big, now) => native.tracerApply(handle, nums, n, text, big, now))
}

function start(r, id, { root = 'agent', description, tree = 0, flat = [root, '', '', '', ''] } = {}) {
  r.start(id, 'sess', 'app', 'user', root, description, tree, tree === 0 ? flat : undefined, undefined, true, false)
}

function toolSpan(toolName, argsJson) {
  const t = new NativeTracer({ exporter: 'memory' }, () => {})
  apply(t, (r) => {
    start(r, 'inv')
    r.tool(R.BEFORE_TOOL, 'inv', 'agent', toolName, 'call-1', argsJson)
    r.tool(R.AFTER_TOOL, 'inv', 'agent', toolName, 'call-1', 0)
    r.finish('inv', false)
  })
  const spans = JSON.parse(t.finishedSpansJson())
  return spans.find((s) => s.name.startsWith('execute_tool'))
}

test('string arguments arrive unchanged, short and long, ASCII or not', () => {
  const pieces = ['a', 'é', '中', '😀']
  // Up to 1024 units a string goes in the batch's text; longer ones go
  // apart, where 4096 bytes of stack hold up to 1365 UTF-16 units and the
  // 256 KiB per-thread buffer up to 87381: cover both sides of each.
  for (const units of [0, 1, 40, 1012, 1013, 1014, 1364, 1365, 1366, 5000, 87381, 87382]) {
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
  apply(t, (r) => r.registerTree(1, ['root', '', 'the root', '', '', 'child', 'root', 'a child', 'm', '']))
  apply(t, (r) => {
    start(r, 'inv', { root: 'root', description: 'the root', tree: 1 })
    r.tool(R.BEFORE_TOOL, 'inv', 'child', 'tool', 'c1', '{}')
    r.tool(R.AFTER_TOOL, 'inv', 'child', 'tool', 'c1', 0)
    r.finish('inv', false)
  })
  const spans = JSON.parse(t.finishedSpansJson())
  const child = spans.find((s) => s.name === 'invoke_agent child')
  assert.ok(child, spans.map((s) => s.name).join(', '))
  assert.equal(child.attributes['gen_ai.agent.description'], 'a child')
  const parent = spans.find((s) => s.spanId === child.parentSpanId)
  assert.equal(parent?.name, 'invoke_agent root', 'the child hangs under its parent')
})

test('a lone surrogate becomes U+FFFD in what a span shows, short or long', () => {
  const span = toolSpan('t\uD800x', `"${'\uDC00'.repeat(2000)}"`)
  assert.equal(span.attributes['gen_ai.tool.name'], 't\uFFFDx')
  assert.equal(span.attributes['gen_ai.tool.call.arguments'], `"${'\uFFFD'.repeat(2000)}"`)
})

test('a batch that cannot be read is reported once, keeps what came before it, and the tracer goes on', () => {
  const t = new NativeTracer({ exporter: 'memory' }, () => {})
  const nums = new Float64Array(64)
  // A START, then a record whose string runs past the batch's text.
  const r = new R.Records()
  start(r, 'inv')
  const n = r.n
  r.agent(R.BEFORE_AGENT, 'inv', 'agent')
  nums.set(r.nums.subarray(0, r.n))
  nums[n + 3] = 1e6
  assert.equal(native.tracerApply(t.handle, nums, r.n, r.text, undefined, performance.now()), 0)
  assert.equal(t.openInvocationCount, 1, 'the START before it was applied')
  assert.equal(apply(t, (r) => r.finish('inv', false)) & 4, 4, 'the next batch hears of it')
  assert.match(t.takeProblem(), /malformed/)
  assert.equal(t.takeProblem(), null, 'once')
  assert.equal(JSON.parse(t.finishedSpansJson()).length, 1, 'the run ended')
  native.tracerApply(t.handle, new Float64Array([99, 0, 0]), 3, '', undefined, performance.now())
  assert.equal(t.openInvocationCount, 0)
  assert.match(t.takeProblem(), /malformed/, 'an unknown kind')
})

test('each span time is the time of its callback, mapped onto the system clock', () => {
  const t = new NativeTracer({ exporter: 'memory' }, () => {})
  const before = BigInt(Date.now()) * 1_000_000n
  const r = new R.Records()
  start(r, 'inv')
  r.tool(R.BEFORE_TOOL, 'inv', 'agent', 'tool', 'c1', '{}')
  const busy = performance.now() + 30
  while (performance.now() < busy) {
    // 30 ms between the tool's start and its end
  }
  r.tool(R.AFTER_TOOL, 'inv', 'agent', 'tool', 'c1', 0)
  r.finish('inv', false)
  const busyAgain = performance.now() + 30
  while (performance.now() < busyAgain) {
    // and 30 ms before the records are applied
  }
  r.take((nums, n, text, big, now) => native.tracerApply(t.handle, nums, n, text, big, now))
  const after = BigInt(Date.now()) * 1_000_000n
  const span = JSON.parse(t.finishedSpansJson()).find((s) => s.name === 'execute_tool tool')
  const [startNs, endNs] = [BigInt(span.startTimeUnixNano), BigInt(span.endTimeUnixNano)]
  const ms = Number(endNs - startNs) / 1e6
  assert.ok(ms >= 29 && ms < 1000, `the span lasted ${ms} ms`)
  assert.ok(startNs >= before - 2_000_000n, 'not before the test began')
  assert.ok(endNs <= after - 25_000_000n, 'ended when its callback ran, not when it was applied')
})

test('a handle reaches only its own tracer, and none once the tracer is collected', async () => {
  const a = new NativeTracer({ exporter: 'memory' }, () => {})
  const b = new NativeTracer({ exporter: 'memory' }, () => {})
  assert.notEqual(a.handle, b.handle)
  apply(a, (r) => start(r, 'inv'))
  assert.equal(a.openInvocationCount, 1)
  assert.equal(b.openInvocationCount, 0)
  assert.throws(() => apply(0, (r) => r.finish('inv', false)), /no such native tracer/)
  const gc = exposeGc()
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
    apply(handle, (r) => r.finish('x', false))
    return false
  } catch {
    return true
  }
}
