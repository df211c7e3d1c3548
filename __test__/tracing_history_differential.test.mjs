// History captured once per conversation (lib/tracing/history.js) against
// today's full capture (ADK_NATIVE_TRACING_FULL_CAPTURE=1): the same runs go
// through both, side by side in one runner, and every span attribute must be
// the same byte for byte (ids and times aside).
import test from 'node:test'
import assert from 'node:assert/strict'
import { InMemoryRunner, SequentialAgent, FunctionTool } from '@google/adk'
import { TracingPlugin } from '../index.js'
import { call, runOnce } from './helpers/scripted_llm.mjs'
import { agent, addTool, plugin } from './helpers/tracing_helpers.mjs'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

/** Two memory-exporting tracers: the delta path and today's full capture. */
function pair() {
  const delta = new TracingPlugin({ name: 'tracing_delta', exporter: 'memory' })
  process.env.ADK_NATIVE_TRACING_FULL_CAPTURE = '1'
  let full
  try {
    full = new TracingPlugin({ name: 'tracing_full', exporter: 'memory' })
  } finally {
    delete process.env.ADK_NATIVE_TRACING_FULL_CAPTURE
  }
  assert.equal(full._histories, undefined, 'the switch selects the full capture')
  assert.ok(delta._histories, 'the delta path is the default')
  // Small histories are tracked from their fifth item only: track every one here.
  delta._histories.minChars = 0
  return { delta, full }
}

/** Spans as comparable text: everything but ids and times, parents by index. */
function comparable(spans) {
  const index = new Map(spans.map((s, i) => [s.spanId, i]))
  return spans.map((s) =>
    JSON.stringify({
      name: s.name,
      parent: s.parentSpanId === undefined ? -1 : index.get(s.parentSpanId),
      status: s.status,
      attributes: s.attributes,
    }),
  )
}

function assertSameSpans({ delta, full }) {
  const a = delta.getFinishedSpans()
  const b = full.getFinishedSpans()
  assert.ok(a.length > 0)
  const ca = comparable(a)
  const cb = comparable(b)
  assert.equal(ca.length, cb.length)
  for (let i = 0; i < ca.length; i++) assert.equal(ca[i], cb[i], `span ${i} (${a[i].name}) differs`)
  return a
}

function chatInputs(spans) {
  return spans.filter((s) => s.name.startsWith('chat ')).map((s) => JSON.parse(s.attributes['gen_ai.input.messages'] ?? 'null'))
}

function runnerWith(root, { before = [], after = [], deltaFirst = true } = {}) {
  const p = pair()
  const tracers = deltaFirst ? [p.delta, p.full] : [p.full, p.delta]
  const runner = new InMemoryRunner({ agent: root, appName: 'app', plugins: [...before, ...tracers, ...after] })
  return { ...p, runner }
}

function searchTool() {
  return new FunctionTool({
    name: 'search',
    description: 'Searches the travel offers',
    execute: async ({ q }) => ({
      query: q,
      results: Array.from({ length: 4 }, (_, k) => ({ title: `${q} offer ${k}`, price: 100 + k, tags: ['a', k % 2 ? 'b' : 'c'], note: k === 2 ? 'quote " and \\ and\nnewline ✓' : undefined })),
    }),
  })
}

/** A script that never runs out: step(i) for the i-th call. */
function endless(step, n = 200) {
  return Array.from({ length: n }, (_, i) => (req) => step(i, req))
}

test('a long multi-agent conversation: transfers, foreign turns rewritten by ADK, tools, many runs in one session', async () => {
  const researcher = agent('researcher', endless((i) => (i % 3 === 0 ? call('search', { q: `topic ${i}` }) : i % 3 === 1 ? `found ${i}: ${'detail '.repeat(i)}` : call('transfer_to_agent', { agentName: 'writer' }))), {
    tools: [searchTool()],
    instruction: 'Research carefully.',
  })
  const writer = agent('writer', endless((i) => (i % 2 === 0 ? `draft ${i} ✍️` : call('transfer_to_agent', { agentName: 'researcher' }))), { instruction: 'Write well.' })
  const coordinator = agent('coordinator', endless((i) => call('transfer_to_agent', { agentName: i % 2 ? 'writer' : 'researcher' })), {
    subAgents: [researcher, writer],
    instruction: 'Route the user.',
  })
  const t = runnerWith(coordinator)
  const sessionId = (await t.runner.sessionService.createSession({ appName: 'app', userId: 'u' })).id
  for (let i = 0; i < 14; i++) await runOnce(t.runner, `question ${i}: ${'context '.repeat(i * 3)}`, { sessionId })
  const spans = assertSameSpans(t)
  const agents = new Set(spans.map((s) => s.attributes['gen_ai.agent.name']))
  for (const name of ['coordinator', 'researcher', 'writer']) assert.ok(agents.has(name), `${name} ran`)
  const inputs = chatInputs(spans)
  assert.ok(Math.max(...inputs.map((m) => m.length)) >= 20, 'the history grew long')
  assert.ok(
    inputs.some((m) => m.some((c) => c.parts.some((p) => p.type === 'text' && /^\[(researcher|writer)\] (said|called|tool)/.test(p.content)))),
    'other agents turns were rewritten by ADK',
  )
  assert.ok(t.delta._histories.reusedItems > 100, `items were reused (${t.delta._histories.reusedItems})`)
})

test('a sequential pipeline over several runs, streamed turns', async () => {
  const first = agent('first', endless((i) => (i % 2 ? `first says ${i}` : call('add', { a: i, b: 2 }))), { tools: [addTool()], partials: ['fir', 'first s'] })
  const second = agent('second', endless((i) => `second says ${i}`), { partials: ['sec'] })
  const seq = new SequentialAgent({ name: 'pipeline', description: 'two steps', subAgents: [first, second] })
  const t = runnerWith(seq, { deltaFirst: false })
  const sessionId = (await t.runner.sessionService.createSession({ appName: 'app', userId: 'u' })).id
  for (let i = 0; i < 8; i++) {
    const { events } = await runOnce(t.runner, `go ${i}`, { sessionId })
    assert.ok(events.some((e) => e.partial), 'the run streamed partials')
  }
  assertSameSpans(t)
  assert.ok(t.delta._histories.reusedItems > 20)
})

test('edited and compacted histories: requests rewritten before capture, session events edited, mutations after capture', async () => {
  let n = 0
  // Before the tracers: edits the request (deep, in place, removals, new
  // objects with the same text, key order, undefined keys, compaction).
  const editor = plugin('editor', {
    beforeModelCallback: async ({ llmRequest }) => {
      const c = llmRequest.contents
      n++
      if (n % 5 === 1 && c.length > 2) c[1].parts[0] = { ...c[1].parts[0], text: `edited at ${n}` }
      if (n % 5 === 2 && c.length > 4) c.splice(2, 1)
      if (n % 5 === 3) c[0] = structuredClone(c[0]) // new objects and strings, same text
      if (n % 5 === 4 && c.length > 3) c[1] = { parts: c[1].parts, role: c[1].role } // key order
      if (n % 7 === 0) c[0].extra = undefined
      if (n % 11 === 0 && c.length > 6) c.splice(0, c.length - 2, { role: 'user', parts: [{ text: `summary of ${c.length - 2} turns` }] })
      return undefined
    },
  })
  // After the tracers: mutates what they already captured, in place.
  const vandal = plugin('vandal', {
    beforeModelCallback: async ({ llmRequest }) => {
      for (const content of llmRequest.contents) for (const part of content.parts ?? []) if (typeof part.text === 'string') part.text += ' (changed after capture)'
      return undefined
    },
  })
  const root = agent('a', endless((i) => (i % 2 ? `answer ${i}` : call('add', { a: i, b: i }))), { tools: [addTool()] })
  const t = runnerWith(root, { before: [editor], after: [vandal] })
  const sessionId = (await t.runner.sessionService.createSession({ appName: 'app', userId: 'u' })).id
  for (let i = 0; i < 12; i++) {
    await runOnce(t.runner, `turn ${i}`, { sessionId })
    // Edit the stored session itself: later requests differ in the middle.
    if (i % 4 === 3) {
      const session = t.runner.sessionService.sessions.app.u[sessionId]
      const ev = session.events.find((e) => e.content?.parts?.[0]?.text)
      ev.content.parts[0].text = `rewritten ${i}`
    }
  }
  const spans = assertSameSpans(t)
  const inputs = chatInputs(spans)
  assert.ok(inputs.some((m) => m.some((c) => c.parts.some((p) => p.content?.startsWith('summary of')))), 'a compacted history was captured')
  assert.ok(!inputs.some((m) => m.some((c) => c.parts.some((p) => p.content?.includes('changed after capture')))), 'no span shows what the model did not receive from the tracers point')
  assert.ok(t.delta._histories.reusedItems > 0)
})

test('values JSON.stringify does not walk plainly fall back to the full capture', async () => {
  const odd = new FunctionTool({
    name: 'odd',
    description: 'returns odd values',
    execute: async ({ k }) => {
      if (k === 0) return { when: new Date(0), n: 1 }
      if (k === 1) return { ratio: NaN, inf: -Infinity, list: [1, undefined, () => 1] }
      if (k === 2) return { custom: { toJSON: () => 'custom' } }
      return { plain: k }
    },
  })
  const root = agent('a', endless((i) => (i % 2 ? `ok ${i}` : call('odd', { k: (i / 2) % 4 }))), { tools: [odd] })
  const t = runnerWith(root)
  const sessionId = (await t.runner.sessionService.createSession({ appName: 'app', userId: 'u' })).id
  for (let i = 0; i < 8; i++) await runOnce(t.runner, `q ${i}`, { sessionId })
  assertSameSpans(t)
  assert.ok(t.delta._histories.unsupported > 0, 'some requests fell back to the full capture')
})

// Direct calls: random edits of long conversations, many sessions (past the
// bound on remembered conversations), the same objects mutated in place.
test('random edits of many conversations (direct calls)', async () => {
  const p = pair()
  const plugins = [p.delta, p.full]
  let seed = 7 // mulberry32
  const rnd = (n) => {
    seed = (seed + 0x6d2b79f5) | 0
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return (((x ^ (x >>> 14)) >>> 0) % n)
  }
  const words = ['alpha', 'beta', 'gamma', 'ünïcode ✓', 'quote "x"', 'back\\slash', '']
  const item = () => {
    switch (rnd(6)) {
      case 0:
        return { role: 'user', parts: [{ text: words[rnd(words.length)] + rnd(1000) }] }
      case 1:
        return { role: 'model', parts: [{ functionCall: { id: `c${rnd(99)}`, name: 'f', args: { a: rnd(10), b: [1, 2.5, -0, null, true] } } }] }
      case 2:
        return { role: 'user', parts: [{ functionResponse: { id: `c${rnd(99)}`, name: 'f', response: { result: { deep: { deeper: words[rnd(words.length)] } } } } }] }
      case 3:
        return { role: 'model', parts: [{ text: 'thinking', thought: true }, { text: 'answer' }] }
      case 4:
        return { parts: [{ inlineData: { mimeType: 'image/png', data: 'AAAA' } }], role: 'user' }
      default:
        return { role: 'user', parts: [{ text: 'x', extra: undefined }] }
    }
  }
  const sessions = Array.from({ length: 300 }, (_, i) => ({ id: `s${i}`, contents: [item()] }))
  let inv = 0
  for (let step = 0; step < 2500; step++) {
    const s = sessions[step < 1200 ? rnd(300) : rnd(5)]
    const c = s.contents
    switch (rnd(10)) {
      case 0:
        if (c.length > 1) c.splice(rnd(c.length), 1)
        break
      case 1:
        if (c.length) c[rnd(c.length)].parts[0].text = `mutated ${step}`
        break
      case 2:
        if (c.length) c[rnd(c.length)] = structuredClone(c[rnd(c.length)])
        break
      case 3:
        if (c.length) c[rnd(c.length)].role = rnd(2) ? 'user' : 'model'
        break
      case 4:
        c.push(rnd(20) === 0 ? { role: 'user', parts: [{ text: 'big', n: rnd(2) ? NaN : 1 }] } : item())
        break
      default:
        c.push(item(), item())
    }
    const invocationId = `inv-${++inv}`
    const ic = { invocationId, session: { id: s.id, appName: 'app', userId: 'u' } }
    const cc = { invocationContext: ic, agentName: rnd(2) ? 'a' : 'b' }
    // The same array object each time (as a caller that keeps it may pass).
    const llmRequest = { model: 'm', contents: c, config: { systemInstruction: step % 3 ? 'sys' : { parts: [{ text: `sys ${step % 2}` }] }, tools: [{ functionDeclarations: [{ name: 'f', parameters: { type: 'OBJECT' } }] }] } }
    for (const tp of plugins) {
      await tp.beforeRunCallback({ invocationContext: ic })
      await tp.beforeModelCallback({ callbackContext: cc, llmRequest })
      await tp.afterModelCallback({ callbackContext: cc, llmResponse: { content: { role: 'model', parts: [{ text: 'ok' }] } } })
      await tp.afterRunCallback({ invocationContext: ic })
    }
  }
  assertSameSpans(p)
  const h = p.delta._histories
  assert.ok(h.reusedItems > 1000)
  assert.ok(h.unsupported > 0)
  assert.ok(h.size <= 256, 'remembered conversations are bounded')
  assert.ok(p.delta._native.historyCount <= 256, 'the native side holds no more')
})

// Tool declarations are checked against the agent's last ones: edited in
// place, replaced, reordered, of several agents, odd values, a throwing getter.
test('tool declarations reused per agent show exactly what each request declared (direct calls)', async () => {
  const p = pair()
  assert.equal(p.full._tools._check, false, 'the full capture serialises every declaration')
  const decl = (name, extra = {}) => ({ name, description: `does ${name}`, parameters: { type: 'OBJECT', properties: { q: { type: 'STRING' } }, required: ['q'] }, ...extra })
  const shared = [{ functionDeclarations: [decl('f'), decl('g')] }]
  const variants = [
    () => shared,
    () => [{ functionDeclarations: [decl('f'), decl('g')] }],
    () => [{ functionDeclarations: [decl('g'), decl('f')] }],
    () => [{ functionDeclarations: [decl('f', { description: 'changed' })] }],
    () => [{ functionDeclarations: [decl('f', { extra: undefined, when: new Date(0) })] }],
    () => [{ googleSearch: {} }],
    () => [{ functionDeclarations: [] }],
    () => [{ functionDeclarations: [decl('f', { n: NaN })] }],
    () => undefined,
    () => [{ functionDeclarations: [Object.defineProperty(decl('h'), 'description', { enumerable: true, get: () => { throw new Error('no') } })] }],
  ]
  let seed = 3 // mulberry32
  const rnd = (n) => {
    seed = (seed + 0x6d2b79f5) | 0
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) % n
  }
  for (let step = 0; step < 400; step++) {
    if (step % 25 === 3) shared[0].functionDeclarations[0].description = `edited ${step % 3}`
    // Mostly the agent's usual declarations (the same object, or a copy).
    const tools = rnd(10) === 0 ? variants[rnd(variants.length)]() : rnd(2) ? shared : structuredClone(shared)
    const ic = { invocationId: `t-${step}`, session: { id: 's' } }
    const cc = { invocationContext: ic, agentName: ['a', 'b', 'c'][rnd(3)] }
    const llmRequest = { model: 'm', contents: [{ role: 'user', parts: [{ text: 'q' }] }], config: { tools } }
    for (const tp of [p.delta, p.full]) {
      await tp.beforeRunCallback({ invocationContext: ic })
      await tp.beforeModelCallback({ callbackContext: cc, llmRequest })
      await tp.afterRunCallback({ invocationContext: ic })
    }
  }
  const spans = assertSameSpans(p)
  assert.ok(p.delta._tools.reused > 100, `declarations were reused (${p.delta._tools.reused})`)
  const shown = new Set(spans.map((s) => s.attributes['gen_ai.tool.definitions']).filter(Boolean))
  assert.ok(shown.size >= 4, `the spans show the declarations as they changed (${shown.size} distinct)`)
})

test('big histories are tracked from their first call, small ones from their fifth item, fresh two-call sessions never', async () => {
  const p = pair()
  p.delta._histories.minChars = 8 * 1024 // the default
  const h = p.delta._histories
  const big = Array.from({ length: 300 }, (_, i) => ({ role: i % 2 ? 'model' : 'user', parts: [{ text: `turn ${i} ${'words '.repeat(10)}` }] }))
  const small = [{ role: 'user', parts: [{ text: 'hi' }] }]
  const model = async (sid, invocationId, contents) => {
    const ic = { invocationId, session: { id: sid } }
    const cc = { invocationContext: ic, agentName: 'a' }
    for (const tp of [p.delta, p.full]) {
      await tp.beforeRunCallback({ invocationContext: ic })
      await tp.beforeModelCallback({ callbackContext: cc, llmRequest: { model: 'm', contents } })
    }
  }
  const end = async (invocationId) => {
    for (const tp of [p.delta, p.full]) await tp.afterRunCallback({ invocationContext: { invocationId } })
  }
  // Fresh sessions of one run with two model calls (a tool call between).
  for (let i = 0; i < 20; i++) {
    const contents = [{ role: 'user', parts: [{ text: `q ${i}` }] }]
    await model(`fresh-${i}`, `f-${i}`, contents)
    contents.push({ role: 'model', parts: [{ functionCall: { name: 't', args: {} } }] }, { role: 'user', parts: [{ functionResponse: { name: 't', response: { ok: i } } }] })
    await model(`fresh-${i}`, `f-${i}`, contents)
    await end(`f-${i}`)
  }
  assert.equal(h.size, 0, 'no fresh two-call session is tracked')
  // One run whose requests grow by one item a call.
  const { MIN_ITEMS } = require('../lib/tracing/history.js')
  const long = [{ role: 'user', parts: [{ text: 'long' }] }]
  for (let k = 0; k < 6; k++) {
    await model('long', 'l-1', long)
    assert.equal(h.size, long.length < MIN_ITEMS ? 0 : 1, `${long.length} items`)
    long.push({ role: 'model', parts: [{ text: `step ${k}` }] })
  }
  await end('l-1')
  assert.equal(h.size, 1, 'tracked from its fifth item')
  for (let i = 0; i < 6; i++) {
    for (const [sid, contents] of [['big', big], ['small', small]]) {
      contents.push({ role: 'user', parts: [{ text: `more ${i}` }] })
      await model(sid, `${sid}-${i}`, contents)
      await end(`${sid}-${i}`)
    }
    if (i === 0) assert.equal(h.size, 2, 'the big one is tracked at once, the small one not yet')
  }
  assertSameSpans(p)
  assert.equal(h.size, 3, 'the small one is tracked once it had five items, over later runs')
  assert.ok(h.reusedItems >= 5 * 300, `the big one reused its items (${h.reusedItems})`)
})

test('a throwing getter or proxy in a tracked history falls back to the full (sanitising) capture and leaks no slot', async () => {
  const p = pair()
  const contents = [{ role: 'user', parts: [{ text: 'a' }] }]
  const calls = []
  for (let i = 0; i < 8; i++) {
    contents.push({ role: i % 2 ? 'model' : 'user', parts: [{ text: `t${i}` }] })
    if (i === 3) Object.defineProperty(contents[1], 'boom', { enumerable: true, configurable: true, get: () => { throw new Error('getter') } })
    if (i === 5) delete contents[1].boom
    if (i === 6) contents[2] = new Proxy(contents[2], { ownKeys: () => { throw new Error('proxy') } })
    calls.push(i)
    const ic = { invocationId: `g-${i}`, session: { id: 'g' } }
    const cc = { invocationContext: ic, agentName: 'a' }
    for (const tp of [p.delta, p.full]) {
      await tp.beforeRunCallback({ invocationContext: ic })
      await tp.beforeModelCallback({ callbackContext: cc, llmRequest: { model: 'm', contents } })
      await tp.afterRunCallback({ invocationContext: ic })
    }
  }
  const spans = assertSameSpans(p)
  assert.equal(spans.filter((s) => s.name.startsWith('chat ')).length, calls.length, 'every model call has its span')
  assert.ok(p.delta._native.historyCount <= p.delta._histories.size, 'the native side holds no slot this side forgot')
})

test('the remembered JSON is bounded in characters: least recently used conversations are forgotten on both sides', () => {
  const { Histories, MAX_CHARS } = require('../lib/tracing/history.js')
  const forgotten = []
  const h = new Histories((slot) => forgotten.push(slot))
  const big = 'x'.repeat(Math.floor(MAX_CHARS / 3))
  const slots = []
  for (let i = 0; i < 4; i++) {
    const ctx = { invocationContext: { session: { id: `big${i}` } } }
    const d = h.delta(ctx, `i${i}`, 'a', [{ role: 'user', parts: [{ text: big }] }])
    assert.equal(d.keep, true)
    slots.push(d.slot)
  }
  assert.ok(h._chars <= MAX_CHARS, `${h._chars} chars kept`)
  assert.deepEqual(forgotten, slots.slice(0, forgotten.length), 'the oldest went first')
  assert.ok(forgotten.length >= 1 && h.size === 4 - forgotten.length)
})

test('least recently used order holds when a conversation comes back twice in a row', () => {
  const { Histories, MAX_CONVERSATIONS, MIN_ITEMS } = require('../lib/tracing/history.js')
  const forgotten = []
  const h = new Histories((slot) => forgotten.push(slot))
  const items = (n) => Array.from({ length: MIN_ITEMS }, (_, i) => ({ role: 'user', parts: [{ text: `${n}:${i}` }] }))
  const ask = (n, extra = 0) => h.delta({ invocationContext: { session: { id: `s${n}` } } }, `i${n}`, 'a', [...items(n), ...items(n).slice(0, extra)])
  const slots = []
  for (let n = 0; n < MAX_CONVERSATIONS; n++) slots.push(ask(n).slot)
  // Conversation 0 comes back twice (the second time it is already the most
  // recent), and keeps its items across both.
  assert.equal(ask(0, 1).reuse, MIN_ITEMS)
  const again = ask(0, 2)
  assert.equal(again.reuse, MIN_ITEMS + 1)
  assert.equal(again.json, JSON.stringify(items(0).slice(1, 2)))
  assert.equal(ask(0, 2).json, '[]')
  assert.deepEqual(forgotten, [])
  ask(MAX_CONVERSATIONS)
  assert.deepEqual(forgotten, [slots[1]], 'the least recently used went, not the one that came back')
  assert.equal(h.size, MAX_CONVERSATIONS)
  assert.equal(ask(0, 2).reuse, MIN_ITEMS + 2)
})

test('each session and agent keeps its own conversation, also when requests alternate between them; one forgotten comes back afresh', () => {
  const { Histories, MIN_ITEMS } = require('../lib/tracing/history.js')
  const forgotten = []
  const h = new Histories((slot) => forgotten.push(slot))
  const items = (tag) => Array.from({ length: MIN_ITEMS }, (_, i) => ({ role: 'user', parts: [{ text: `${tag}:${i}` }] }))
  // One session object, its id the same string on every request, as ADK's.
  const ctx = { invocationContext: { session: { id: 's1' } } }
  const ask = (c, agent, tag, invocation = 'i1') => h.delta(c, invocation, agent, items(tag))
  const first = { a: ask(ctx, 'a', 'a'), b: ask(ctx, 'b', 'b') }
  assert.notEqual(first.a.slot, first.b.slot)
  for (let i = 0; i < 3; i++) {
    for (const agent of ['a', 'b']) {
      const d = ask(ctx, agent, agent)
      assert.deepEqual([d.slot, d.reuse, d.json], [first[agent].slot, MIN_ITEMS, '[]'], `agent ${agent}, round ${i}`)
    }
  }
  // The same agent in another session: a conversation of its own.
  const other = ask({ invocationContext: { session: { id: 's2' } } }, 'a', 'a')
  assert.notEqual(other.slot, first.a.slot)
  assert.equal(other.reuse, 0)
  // No session: one conversation per invocation.
  const none = { invocationContext: {} }
  const inv1 = ask(none, 'a', 'x', 'inv1')
  assert.notEqual(ask(none, 'a', 'x', 'inv2').slot, inv1.slot)
  assert.equal(ask(none, 'a', 'x', 'inv1').reuse, MIN_ITEMS)
  // Forgotten (as after a refused delta), then asked again: tracked anew,
  // also when it was the conversation asked last.
  h.forgetKey(first.a.key)
  assert.deepEqual(forgotten, [first.a.slot])
  assert.equal(ask(ctx, 'a', 'a').reuse, 0)
  const kept = ask(ctx, 'a', 'a')
  assert.equal(kept.reuse, MIN_ITEMS)
  h.forgetKey(kept.key)
  assert.equal(ask(ctx, 'a', 'a').reuse, 0)
  assert.equal(ask(ctx, 'a', 'a').reuse, MIN_ITEMS, 'remembered again under the same key')
})
