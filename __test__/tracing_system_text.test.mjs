// A string system instruction crosses to the native tracer as text (its
// JSON written in Rust): the span keeps it exactly, escapes included.
import test from 'node:test'
import assert from 'node:assert/strict'
import { runOnce } from './helpers/scripted_llm.mjs'
import { agent, traced } from './helpers/tracing_helpers.mjs'

const TRICKY = 'Quote " backslash \\ tab\t newline\n nul\u0000 unit\u001f del\u007f é 漢字 😀 \u2028\u2029 end'

test('a string system instruction is captured exactly', async () => {
  const { tracing, runner } = traced(agent('sys', ['ok'], { instruction: TRICKY }))
  await runOnce(runner, 'hi')
  const chat = tracing.getFinishedSpans().find((s) => s.attributes['gen_ai.operation.name'] === 'chat')
  const parts = JSON.parse(chat.attributes['gen_ai.system_instructions'])
  assert.equal(parts.length, 1)
  assert.equal(parts[0].type, 'text')
  assert.ok(parts[0].content.includes(TRICKY), JSON.stringify(parts[0].content))
})

test('a lone surrogate in the conversation costs one character, not the messages', async () => {
  // JSON.stringify writes an unpaired surrogate as an escape (\ud800); the
  // span shows U+FFFD there and keeps every message and part around it.
  const { tracing, runner } = traced(agent('lone', ['answer \uDC00 here']))
  await runOnce(runner, 'ask \uD800 this')
  const chat = tracing.getFinishedSpans().find((s) => s.attributes['gen_ai.operation.name'] === 'chat')
  const input = JSON.parse(chat.attributes['gen_ai.input.messages'])
  assert.deepEqual(input, [{ role: 'user', parts: [{ type: 'text', content: 'ask \uFFFD this' }] }])
  const output = JSON.parse(chat.attributes['gen_ai.output.messages'])
  assert.deepEqual(output[0].parts, [{ type: 'text', content: 'answer \uFFFD here' }])
})
