// The callbacks' records reach the tracing thread in batches
// (lib/tracing/records.js): within a few ms of a run's end with nothing
// asking, at once when a batch grows big, and before anything that reads
// the tracer's state answers. Through a real InMemoryRunner.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { agent, addTool, traced, newSession, request, byName, plugin } from './helpers/tracing_helpers.mjs'
import { call } from './helpers/scripted_llm.mjs'
import { FunctionTool, SequentialAgent } from '@google/adk'

async function runOnce(runner, text = 'add please') {
  const sessionId = await newSession(runner)
  for await (const _ of runner.runAsync(request(sessionId, text))) {
    // drain
  }
  return sessionId
}

/** The spans the native tracer's sink holds, without handing records over. */
const spansHeld = (tracing) => JSON.parse(tracing._native.finishedSpansJson())

test('a finished run reaches the sink within a few ms, with nothing reading the tracer', async () => {
  const root = agent('adder', [call('add', { a: 1, b: 2 }), 'three'], { tools: [addTool()] })
  const { tracing, runner } = traced(root)
  await runOnce(runner)
  assert.ok(tracing._r.n > 0, 'the run is still recorded on this side right after it ends')
  for (let i = 0; i < 100 && spansHeld(tracing).length < 5; i++) await sleep(10)
  const names = spansHeld(tracing).map((s) => s.name)
  assert.deepEqual(names.sort(), ['chat scripted-model', 'chat scripted-model', 'execute_tool add', 'invoke_agent adder', 'invoke_agent adder'].sort())
  assert.equal(tracing._r.n, 0)
  await tracing.shutdown()
})

test('what reads the tracer sees every callback made before it', async () => {
  const seen = {}
  const probe = plugin('probe', {
    async afterToolCallback({ toolContext }) {
      // Mid-run, from another plugin: the run's records are still on the JS side.
      seen.traceId = tracing.traceIdOf(toolContext.invocationId)
      seen.open = tracing.openInvocationCount
      seen.spans = tracing.getFinishedSpans().map((s) => s.name)
      return undefined
    },
  })
  const root = agent('adder', [call('add', { a: 1, b: 2 }), 'three'], { tools: [addTool()] })
  const { tracing, runner } = traced(root, { plugins: [probe] })
  await runOnce(runner)
  assert.match(seen.traceId ?? '', /^[0-9a-f]{32}$/)
  assert.equal(seen.open, 1)
  assert.deepEqual(seen.spans, ['chat scripted-model'], 'the first model call had ended; the tool span had not')
  const spans = tracing.getFinishedSpans()
  assert.equal(spans.length, 5)
  assert.equal(byName(spans, 'execute_tool add')[0].traceId, seen.traceId)
  assert.equal(tracing.openInvocationCount, 0)
  await tracing.shutdown()
})

test('a batch holding more than 4 MiB of long strings goes at once', async () => {
  const big = 'x'.repeat(3 * 1024 * 1024)
  const root = agent('echo', [big, big], {})
  const { tracing, runner } = traced(root)
  await runOnce(runner, 'first')
  // One 3 MiB answer, as the model's content and the event's: past the
  // bound at the event, so the long strings went then; only the run's last
  // few records wait for the timer.
  assert.equal(tracing._r.big.length, 0, 'the long strings were handed over without waiting for the timer')
  assert.ok(tracing._r.n > 0 && tracing._r.n < 16, `${tracing._r.n} numbers left`)
  const output = byName(tracing.getFinishedSpans(), 'chat scripted-model')[0].attributes['gen_ai.output.messages']
  assert.ok(output.includes(big), 'the long answer reached its span whole')
  await tracing.shutdown()
})

test('records taken by shutdown() are applied before the tracer stops', async () => {
  const root = agent('adder', [call('add', { a: 1, b: 2 }), 'three'], { tools: [addTool()] })
  const { tracing, runner } = traced(root)
  await runOnce(runner)
  assert.ok(tracing._r.n > 0)
  await tracing.shutdown()
  assert.equal(spansHeld(tracing).length, 5)
})

test("the console exporter prints a run's tree before what the program prints after the run", () => {
  const fixture = fileURLToPath(new URL('./fixtures/tracing_console_order.mjs', import.meta.url))
  const env = { ...process.env }
  delete env.NODE_TEST_CONTEXT // the child is a plain script, not a test file
  const r = spawnSync(process.execPath, [fixture], { encoding: 'utf8', env })
  assert.equal(r.status, 0, r.stderr)
  const tree = r.stdout.indexOf('invoke_agent orderagent')
  const after = r.stdout.indexOf('AFTER RUN')
  assert.ok(tree >= 0 && after >= 0, r.stdout)
  assert.ok(tree < after, r.stdout)
})

test("strings repeated within a batch (ids, names, each agent's tools and instruction) reach every span as they were", async () => {
  const RUNS = 3
  const tool = (name) => new FunctionTool({ name, description: `tool ${name}`, execute: async () => ({ ok: name }) })
  const steps = ['a', 'b', 'c'].map((n) =>
    agent(n, Array.from({ length: RUNS }, () => [call(`${n}_tool`, { n }), `${n} done`]).flat(), {
      tools: [tool(`${n}_tool`)],
      instruction: `You are ${n}.`,
    }),
  )
  const { tracing, runner } = traced(new SequentialAgent({ name: 'pipeline', description: 'three steps', subAgents: steps }))
  // Count the repeats handed over (records.js writes one as 2^40 + i).
  let repeats = 0
  const calls = tracing._n
  tracing._n = {
    tracerApply(h, nums, n, ...rest) {
      for (let i = 0; i < n; i++) if (nums[i] >= 2 ** 40) repeats++
      return calls.tracerApply(h, nums, n, ...rest)
    },
  }
  const sessionId = await newSession(runner)
  for (let r = 0; r < RUNS; r++) {
    for await (const _ of runner.runAsync(request(sessionId, `run ${r}`))) {
      // drain
    }
  }
  const spans = tracing.getFinishedSpans()
  assert.ok(repeats > 6 * RUNS, `repeats handed over: ${repeats}`)
  const chats = byName(spans, 'chat scripted-model')
  assert.equal(chats.length, 6 * RUNS)
  for (const chat of chats) {
    const n = chat.attributes['gen_ai.agent.name']
    assert.ok(['a', 'b', 'c'].includes(n), n)
    const definitions = JSON.parse(chat.attributes['gen_ai.tool.definitions'])
    assert.deepEqual(definitions.map((d) => d.name), [`${n}_tool`])
    assert.match(chat.attributes['gen_ai.system_instructions'], new RegExp(`You are ${n}\\.`))
    for (const other of ['a', 'b', 'c'].filter((o) => o !== n)) {
      assert.doesNotMatch(chat.attributes['gen_ai.system_instructions'], new RegExp(`You are ${other}\\.`))
    }
  }
  const roots = spans.filter((s) => s.parentSpanId === undefined || s.parentSpanId === '')
  assert.equal(new Set(roots.map((s) => s.traceId)).size, RUNS)
  for (const n of ['a', 'b', 'c']) {
    const tools = byName(spans, `execute_tool ${n}_tool`)
    assert.equal(tools.length, RUNS)
    for (const t of tools) {
      assert.equal(t.attributes['gen_ai.agent.name'], n)
      assert.deepEqual(JSON.parse(t.attributes['gen_ai.tool.call.arguments']), { n })
      assert.deepEqual(JSON.parse(t.attributes['gen_ai.tool.call.result']), { ok: `${n}_tool` })
    }
    assert.equal(new Set(tools.map((t) => t.attributes['gen_ai.tool.call.id'])).size, RUNS)
  }
  await tracing.shutdown()
})
