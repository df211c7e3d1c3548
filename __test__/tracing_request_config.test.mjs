// The request attributes of a generation config made only of numbers
// (lib/tracing/config_json.js builds that JSON without JSON.stringify) and of one that
// mixes numbers with other values (the general path), through a real run.
import test from 'node:test'
import assert from 'node:assert/strict'
import { runOnce } from './helpers/scripted_llm.mjs'
import { agent, traced } from './helpers/tracing_helpers.mjs'
import { InMemoryRunner } from '@google/adk'
import { TracingPlugin } from '../index.js'

async function chatAttributes(generateContentConfig) {
  const { tracing, runner } = traced(agent('cfg', ['ok'], { generateContentConfig }))
  await runOnce(runner, 'hi')
  const chat = tracing.getFinishedSpans().find((s) => s.attributes['gen_ai.operation.name'] === 'chat')
  assert.ok(chat, 'a chat span')
  return chat.attributes
}

const REQUEST = /^gen_ai\.request\.(?!model)/
const requestOnly = (attrs) => Object.fromEntries(Object.entries(attrs).filter(([k]) => REQUEST.test(k)))

test('a config of numbers only: every number attribute, integers as integers', async () => {
  const attrs = await chatAttributes({
    temperature: 0.5,
    topP: 1,
    maxOutputTokens: 7,
    frequencyPenalty: -0.25,
    presencePenalty: 1e-7,
    seed: -3,
    candidateCount: 2,
  })
  assert.deepEqual(requestOnly(attrs), {
    'gen_ai.request.temperature': 0.5,
    'gen_ai.request.top_p': 1,
    'gen_ai.request.max_tokens': 7,
    'gen_ai.request.frequency_penalty': -0.25,
    'gen_ai.request.presence_penalty': 1e-7,
    'gen_ai.request.seed': -3,
    'gen_ai.request.choice.count': 2,
  })
})

test('a config of numbers: a non-finite one is left out like JSON null', async () => {
  const attrs = await chatAttributes({ temperature: Number.NaN, topP: 0.9, maxOutputTokens: Infinity })
  assert.deepEqual(requestOnly(attrs), { 'gen_ai.request.top_p': 0.9 })
})

test('numbers mixed with other values: the general path keeps every field once', async () => {
  const config = { temperature: 0.25, seed: 11, stopSequences: ['END', 'STOP'], candidateCount: 1 }
  const attrs = await chatAttributes(config)
  assert.deepEqual(requestOnly(attrs), {
    'gen_ai.request.temperature': 0.25,
    'gen_ai.request.seed': 11,
    'gen_ai.request.stop_sequences': ['END', 'STOP'],
    'gen_ai.request.choice.count': 1,
  })
})

test('an empty stopSequences sets no attribute (no stop sequences, as Weave reads it)', async () => {
  const attrs = await chatAttributes({ temperature: 0.25, stopSequences: [] })
  assert.deepEqual(requestOnly(attrs), { 'gen_ai.request.temperature': 0.25 })
})

test('configs that change, repeat, go and come back between calls: each chat span shows its own request', async () => {
  const configs = [
    { temperature: 0.5, maxOutputTokens: 7 },
    { temperature: 0.5, maxOutputTokens: 7 },
    { temperature: 0.5, maxOutputTokens: 8 },
    {},
    { temperature: 0.5, maxOutputTokens: 8 },
    { temperature: 0.5, maxOutputTokens: 8, stopSequences: ['X'] },
    { temperature: 0.5, maxOutputTokens: 8 },
    { temperature: Number.NaN },
    { temperature: Number.NaN },
  ]
  const want = (c) =>
    Object.fromEntries(
      [
        ['gen_ai.request.temperature', c.temperature],
        ['gen_ai.request.max_tokens', c.maxOutputTokens],
        ['gen_ai.request.stop_sequences', c.stopSequences],
      ].filter(([, v]) => v !== undefined && !Number.isNaN(v)),
    )
  // One plugin for all: what one call's config left behind must not show on the next.
  const tracing = new TracingPlugin({ exporter: 'memory' })
  for (const generateContentConfig of configs) {
    const runner = new InMemoryRunner({ agent: agent('cfg', ['ok'], { generateContentConfig }), appName: 'app', plugins: [tracing] })
    await runOnce(runner, 'hi')
  }
  const chats = tracing.getFinishedSpans().filter((s) => s.attributes['gen_ai.operation.name'] === 'chat')
  assert.equal(chats.length, configs.length)
  chats.forEach((chat, i) => assert.deepEqual(requestOnly(chat.attributes), want(configs[i]), `call ${i}`))
})
