// Finishing invocations: breaks, runGuarded, early throws, idempotence,
// shutdown, the open-invocation cap (tracing.md "End of an invocation").
import test from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { runGuarded } from '../index.js'
import { call, runOnce } from './helpers/scripted_llm.mjs'
import { exposeGc } from './helpers/gc.mjs'
import { FunctionTool, InMemoryRunner, ParallelAgent } from '@google/adk'
import { agent, addTool, traced, rootOf, newSession, request, plugin, byName, parallelWithStuckSubRun } from './helpers/tracing_helpers.mjs'

const INTERRUPTED = 'weave.google_adk.interrupted'

function toolAgent() {
  return agent('calc', [call('add', { a: 1, b: 2 }), 'three'], { tools: [addTool()] })
}

test('a consumer break is closed by finishInterruptedInvocation, idempotently', async () => {
  const { tracing, runner } = traced(toolAgent())
  const sid = await newSession(runner)
  let invocationId
  for await (const ev of runner.runAsync(request(sid))) {
    invocationId = ev.invocationId
    break // after the model's function call, before the tool ran
  }
  assert.equal(tracing.openInvocationCount, 1)
  const before = tracing.getFinishedSpans().length
  assert.equal(tracing.finishInterruptedInvocation(invocationId), undefined)
  assert.equal(tracing.openInvocationCount, 0)
  const spans = tracing.getFinishedSpans()
  const root = rootOf(spans)
  assert.equal(root.attributes[INTERRUPTED], true)
  const agentSpan = spans.find((s) => s.name === 'invoke_agent calc' && s.parentSpanId === root.spanId)
  assert.equal(agentSpan.attributes[INTERRUPTED], undefined, 'agent spans never get the flag')
  assert.ok(spans.length > before)
  assert.equal(spans.at(-1), root)
  // idempotent, unknown ids and non-strings are ignored
  tracing.finishInterruptedInvocation(invocationId)
  tracing.finishInterruptedInvocation('no-such-id')
  tracing.finishInterruptedInvocation(42)
  tracing.finishInterruptedInvocation(undefined)
  tracing.finishInterruptedInvocation({ toString() { throw new Error('x') } })
  // Called unbound, as a callback: no instance, nothing finished, no warning.
  const warnings = []
  const onWarning = (w) => warnings.push(w.message)
  process.on('warning', onWarning)
  ;[invocationId, 'x'].forEach(tracing.finishInterruptedInvocation)
  await new Promise((r) => setImmediate(r))
  process.off('warning', onWarning)
  assert.deepEqual(warnings, [])
  assert.equal(tracing.getFinishedSpans().length, spans.length)
})

test('open model and tool spans end flagged interrupted', async () => {
  let release
  const gate = new Promise((r) => (release = r))
  const slow = agent('slow', [async () => { await gate; return 'late' }])
  const { tracing, runner } = traced(slow)
  const sid = await newSession(runner)
  const it = runner.runAsync(request(sid))
  const pending = it.next()
  // wait until the model call is in flight
  while (tracing.openInvocationCount === 0) await new Promise((r) => setImmediate(r))
  await new Promise((r) => setTimeout(r, 20))
  const invocationId = (await runner.sessionService.getSession({ appName: 'app', userId: 'u', sessionId: sid })).events[0]?.invocationId
  assert.ok(invocationId)
  tracing.finishInterruptedInvocation(invocationId)
  const spans = tracing.getFinishedSpans()
  const chat = spans.find((s) => s.name === 'chat scripted-model')
  assert.equal(chat.attributes[INTERRUPTED], true)
  assert.equal(rootOf(spans).attributes[INTERRUPTED], true)
  release()
  await pending
  await it.return()
  // late callbacks of a finished invocation open nothing new
  assert.equal(tracing.openInvocationCount, 0)
  assert.equal(tracing.getFinishedSpans().length, spans.length)
})

test('runGuarded closes a consumer break', async () => {
  const { tracing, runner } = traced(toolAgent())
  const sid = await newSession(runner)
  for await (const ev of runGuarded(runner, request(sid))) {
    void ev
    break
  }
  assert.equal(tracing.openInvocationCount, 0)
  assert.equal(rootOf(tracing.getFinishedSpans()).attributes[INTERRUPTED], true)
})

test('runGuarded closes a run that throws before its first event', async () => {
  const thrower = plugin('thrower', {
    beforeRunCallback: async () => {
      throw new Error('no runs today')
    },
  })
  const { tracing, runner } = traced(toolAgent(), { plugins: [thrower] })
  const sid = await newSession(runner)
  await assert.rejects(async () => {
    for await (const ev of runGuarded(runner, request(sid))) void ev
  }, /no runs today/)
  assert.equal(tracing.openInvocationCount, 0)
  const spans = tracing.getFinishedSpans()
  assert.equal(spans.length, 1)
  assert.equal(spans[0].name, 'invoke_agent calc')
  assert.equal(spans[0].attributes[INTERRUPTED], true)
})

test('a drained run is a normal end; finishing again changes nothing', async () => {
  const { tracing, runner } = traced(toolAgent())
  const { events } = await runOnce(runner)
  const spans = tracing.getFinishedSpans()
  tracing.finishInterruptedInvocation(events[0].invocationId)
  assert.equal(tracing.getFinishedSpans().length, spans.length)
  assert.equal(rootOf(spans).attributes[INTERRUPTED], undefined)
  assert.ok(spans.every((s) => s.attributes[INTERRUPTED] === undefined))
})

test('runGuarded over a drained run leaves the spans as they were', async () => {
  const { tracing, runner } = traced(toolAgent())
  const sid = await newSession(runner)
  const seen = []
  for await (const ev of runGuarded(runner, request(sid))) seen.push(ev)
  assert.ok(seen.length >= 3)
  assert.equal(tracing.openInvocationCount, 0)
  assert.equal(rootOf(tracing.getFinishedSpans()).attributes[INTERRUPTED], undefined)
})

test('maxOpenInvocations: past the cap the oldest is finished as interrupted', async () => {
  const { tracing, runner } = traced(agent('a', [call('add', { a: 1, b: 1 }), call('add', { a: 1, b: 1 }), call('add', { a: 1, b: 1 })], { tools: [addTool()] }), { maxOpenInvocations: 2 })
  const ids = []
  for (let i = 0; i < 3; i++) {
    const sid = await newSession(runner)
    for await (const ev of runner.runAsync(request(sid))) {
      ids.push(ev.invocationId)
      break
    }
  }
  assert.equal(tracing.openInvocationCount, 2)
  const roots = tracing.getFinishedSpans().filter((s) => s.parentSpanId === undefined)
  assert.equal(roots.length, 1)
  assert.equal(roots[0].attributes['weave.google_adk.invocation_id'], ids[0])
  assert.equal(roots[0].attributes[INTERRUPTED], true)
  for (const id of ids) tracing.finishInterruptedInvocation(id)
  assert.equal(tracing.openInvocationCount, 0)
})

test('finishing a run by hand forgets the AgentTool runs it ended: they no longer count against maxOpenInvocations', async () => {
  // Two runs stay open (their models wait). Another, with an AgentTool run
  // stuck in a parallel branch, is broken out of and finished by hand (the
  // manual pattern), which ends that AgentTool run too. Then a fourth run
  // starts: three are open, within the cap, so none is pushed out.
  const tracing = traced(agent('unused', ['x']), { maxOpenInvocations: 3 }).tracing
  let release
  const gate = new Promise((r) => (release = r))
  const waiting = async (name) => {
    let entered
    const inside = new Promise((r) => (entered = r))
    const runner = new InMemoryRunner({ agent: agent(name, [async () => (entered(), await gate, 'late')]), appName: 'app', plugins: [tracing] })
    const sid = await newSession(runner)
    const done = (async () => {
      for await (const ev of runner.runAsync(request(sid))) void ev
    })()
    await inside
    return { done }
  }
  const slow = await waiting('slow')
  const par = new InMemoryRunner({ agent: parallelWithStuckSubRun({ a: 1, b: 1 }), appName: 'app', plugins: [tracing] })
  let outer
  try {
    for await (const ev of par.runAsync(request(await newSession(par)))) {
      outer ??= ev.invocationId
      if (ev.author === 'b' && ev.content?.parts?.some((p) => p.text)) break
    }
  } finally {
    tracing.finishInterruptedInvocation(outer)
  }
  assert.equal(tracing.openInvocationCount, 1)
  const held = await waiting('held')
  const quick = new InMemoryRunner({ agent: agent('quick', ['ok']), appName: 'app', plugins: [tracing] })
  await runOnce(quick)
  release()
  await Promise.all([slow.done, held.done])
  assert.equal(tracing.openInvocationCount, 0)
  const roots = tracing.getFinishedSpans().filter((s) => s.parentSpanId === undefined)
  for (const name of ['slow', 'held']) {
    const root = roots.find((s) => s.name === `invoke_agent ${name}`)
    assert.equal(root.attributes[INTERRUPTED], undefined, `${name} was not pushed out`)
    assert.match(root.attributes['gen_ai.output.messages'], /late/)
  }
})

test('shutdown finishes open invocations, later callbacks are no-ops, spans stay readable', async () => {
  const { tracing, runner } = traced(toolAgent())
  const sid = await newSession(runner)
  for await (const ev of runner.runAsync(request(sid))) {
    void ev
    break
  }
  assert.equal(await tracing.forceFlush(), undefined)
  const p1 = tracing.shutdown()
  assert.ok(p1 instanceof Promise)
  assert.equal(await p1, undefined)
  assert.equal(await tracing.shutdown(), undefined)
  assert.equal(tracing.openInvocationCount, 0)
  const spans = tracing.getFinishedSpans()
  assert.equal(rootOf(spans).attributes[INTERRUPTED], true)
  await runOnce(runner)
  assert.equal(tracing.getFinishedSpans().length, spans.length)
  assert.equal(tracing.openInvocationCount, 0)
  assert.equal(await tracing.forceFlush(), undefined)
  assert.equal(tracing.droppedSpanCount, 0)
})

test('agent callbacks, when dispatched, open and end agent spans', async () => {
  const { tracing } = traced(agent('a', []))
  const ic = { invocationId: 'inv-agent-cb', session: { id: 's', appName: 'app', userId: 'u' } }
  const ctx = { invocationContext: ic, get agentName() { return 'a' } }
  await tracing.beforeRunCallback({ invocationContext: ic })
  await tracing.beforeAgentCallback({ agent: { name: 'loopy' }, callbackContext: ctx })
  await tracing.afterAgentCallback({ agent: { name: 'loopy' }, callbackContext: ctx })
  await tracing.beforeAgentCallback({ agent: { name: 'loopy' }, callbackContext: ctx })
  await tracing.afterRunCallback({ invocationContext: ic })
  const loops = byName(tracing.getFinishedSpans(), 'invoke_agent loopy')
  assert.equal(loops.length, 2, 'a re-run opens a fresh span')
})

test('a run broken after a function response has that response as its output', async () => {
  const { tracing, runner } = traced(toolAgent())
  const sid = await newSession(runner)
  let invocationId
  let n = 0
  for await (const ev of runner.runAsync(request(sid))) {
    invocationId = ev.invocationId
    if (++n === 2) break // the model's call, then the tool's response
  }
  tracing.finishInterruptedInvocation(invocationId)
  const root = rootOf(tracing.getFinishedSpans())
  const out = JSON.parse(root.attributes['gen_ai.output.messages'])
  assert.equal(out.length, 1)
  assert.equal(out[0].role, 'user')
  assert.equal(out[0].parts[0].type, 'tool_call_response')
  assert.deepEqual(out[0].parts[0].response, { sum: 3 })
  assert.match(out[0].parts[0].id, /./)
})

// A parallel branch's tool still running when the consumer breaks out returns
// after its run was finished: nothing holds its result then (the run's held
// results were let go at the finish, and nothing would let this one go).
test('a tool result that comes after its run was finished is not held', async () => {
  const gc = exposeGc()
  let result
  const slow = new FunctionTool({
    name: 'u',
    description: 'returns late',
    execute: async () => {
      await sleep(100)
      const value = { big: 'x'.repeat(1000) }
      result = new WeakRef(value)
      return value
    },
  })
  const quick = agent('quick', [async () => (await sleep(10), 'quick')])
  const slowAgent = agent('slow', [call('u'), 'done'], { tools: [slow] })
  const { tracing, runner } = traced(new ParallelAgent({ name: 'par', subAgents: [quick, slowAgent] }))
  for await (const ev of runGuarded(runner, request(await newSession(runner)))) if (ev.content?.parts?.[0]?.text === 'quick') break
  assert.equal(result, undefined, 'the tool was still running when the run was finished')
  assert.equal(tracing.openInvocationCount, 0)
  for (let i = 0; i < 50 && result === undefined; i++) await sleep(20)
  assert.ok(result !== undefined, 'the tool returned')
  const spans = tracing.getFinishedSpans().length
  for (let i = 0; i < 10 && result.deref() !== undefined; i++) {
    await sleep(10)
    gc()
  }
  assert.equal(result.deref(), undefined, 'the late result was let go')
  assert.equal(tracing.openInvocationCount, 0)
  assert.equal(tracing.getFinishedSpans().length, spans)
})
