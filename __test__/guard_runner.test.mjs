// guardRunner(runner): the runner's own runAsync and runEphemeral behave as
// runGuarded does, AgentTool runs included; guarding twice wraps once.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { FunctionTool, InMemoryRunner, LlmAgent } from '@google/adk'
import { ReflectAndRetryToolPlugin, TracingPlugin, guardRunner, runGuarded } from '../index.js'
import { ScriptedLlm, call } from './helpers/scripted_llm.mjs'
import { addTool, agent, failingTool, newSession, parallelWithStuckSubRun, plugin, request } from './helpers/tracing_helpers.mjs'

const INTERRUPTED = 'weave.google_adk.interrupted'

function setup(script = [call('add', { a: 1, b: 2 }), 'three']) {
  const tracing = new TracingPlugin({ exporter: 'memory' })
  const root = new LlmAgent({ name: 'root', model: new ScriptedLlm(script), tools: [addTool()] })
  const runner = new InMemoryRunner({ agent: root, appName: 'app', plugins: [tracing] })
  return { tracing, runner }
}

const rootSpan = (tracing) => tracing.getFinishedSpans().find((s) => s.parentSpanId === undefined)

for (const guarded of [true, false]) {
  test(`runEphemeral broken out of (${guarded ? 'guardRunner' : 'unguarded, control'})`, async () => {
    const { tracing, runner } = setup()
    if (guarded) assert.equal(guardRunner(runner), runner)
    for await (const ev of runner.runEphemeral({ userId: 'u', newMessage: { role: 'user', parts: [{ text: 'hi' }] } })) {
      assert.equal(ev.author, 'root')
      break
    }
    assert.equal(tracing.openInvocationCount, guarded ? 0 : 1)
    if (guarded) assert.equal(rootSpan(tracing).attributes[INTERRUPTED], true)
    // runEphemeral's own cleanup still ran: the session is gone.
    const sessions = await runner.sessionService.listSessions({ appName: 'app', userId: 'u' })
    assert.equal(sessions.sessions.length, 0)
  })
}

test('runAsync of a guarded runner: the same events, and a break finishes the run', async () => {
  const plain = setup()
  const plainEvents = []
  for await (const ev of plain.runner.runAsync(request(await newSession(plain.runner)))) plainEvents.push(ev)

  const { tracing, runner } = setup()
  guardRunner(runner)
  const events = []
  for await (const ev of runner.runAsync(request(await newSession(runner)))) events.push(ev)
  const shape = (evs) => evs.map((e) => [e.author, JSON.stringify(e.content?.parts?.map((p) => Object.keys(p)))])
  assert.deepEqual(shape(events), shape(plainEvents))
  assert.equal(tracing.openInvocationCount, 0)
  assert.equal(rootSpan(tracing).attributes[INTERRUPTED], undefined, 'drained: a normal end')

  for await (const ev of runner.runAsync(request(await newSession(runner)))) {
    void ev
    break
  }
  assert.equal(tracing.openInvocationCount, 0)
  const roots = tracing.getFinishedSpans().filter((s) => s.parentSpanId === undefined)
  assert.equal(roots.length, 2)
  assert.equal(roots[1].attributes[INTERRUPTED], true)
})

test('a run that throws before its first event is finished too', async () => {
  const { tracing, runner } = setup()
  runner.pluginManager.registerPlugin(
    plugin('throws', {
      beforeRunCallback: async () => {
        throw new Error('no run today')
      },
    }),
  )
  guardRunner(runner)
  await assert.rejects(async () => {
    for await (const ev of runner.runAsync(request(await newSession(runner)))) void ev
  }, /no run today/)
  assert.equal(tracing.openInvocationCount, 0)
})

test('guardRunner is idempotent and returns the runner', () => {
  const { runner } = setup()
  const proto = Object.getPrototypeOf(runner)
  assert.equal(guardRunner(runner), runner)
  const runAsync = runner.runAsync
  const runEphemeral = runner.runEphemeral
  assert.notEqual(runAsync, proto.runAsync)
  assert.notEqual(runEphemeral, proto.runEphemeral)
  assert.equal(guardRunner(runner), runner)
  assert.equal(runner.runAsync, runAsync, 'not wrapped twice')
  assert.equal(runner.runEphemeral, runEphemeral)
  // Other instances are untouched.
  assert.equal(setup().runner.runAsync, proto.runAsync)
  assert.throws(() => guardRunner(null), TypeError)
  assert.throws(() => guardRunner({}), TypeError)
})

/** A foreign plugin that counts the finishInterruptedInvocation calls per id. */
function finishCounter() {
  const calls = new Map()
  const p = plugin('finish_counter', {})
  p.finishInterruptedInvocation = (id) => calls.set(id, (calls.get(id) ?? 0) + 1)
  p.calls = calls
  return p
}

test('each invocation is finished once per plugin: guarded twice, runEphemeral, runGuarded over a guarded runner', async () => {
  const { tracing, runner } = setup([call('add', { a: 1, b: 2 }), call('add', { a: 1, b: 2 }), 'three'])
  const counter = finishCounter()
  runner.pluginManager.registerPlugin(counter)
  guardRunner(runner)
  guardRunner(runner)
  for await (const ev of runner.runEphemeral({ userId: 'u', newMessage: { role: 'user', parts: [{ text: 'hi' }] } })) {
    void ev
    break
  }
  const events = []
  for await (const ev of runGuarded(runner, request(await newSession(runner)))) events.push(ev)
  assert.equal(events.length, 3, 'every event once')
  assert.equal(tracing.openInvocationCount, 0)
  assert.equal(counter.calls.size, 2)
  assert.deepEqual([...counter.calls.values()], [1, 1])
})

test('a guarded runner finishes AgentTool runs a break left open', async () => {
  // Branch a is inside its AgentTool call (the sub-agent's model waits) when
  // the consumer breaks on branch b's answer.
  const tracing = new TracingPlugin({ exporter: 'memory' })
  const retry = new ReflectAndRetryToolPlugin()
  const runner = guardRunner(
    new InMemoryRunner({ agent: parallelWithStuckSubRun({ a: 1, b: 1 }), appName: 'app', plugins: [retry, tracing] }),
  )
  for await (const ev of runner.runAsync(request(await newSession(runner)))) {
    if (ev.author === 'b' && ev.content?.parts?.some((p) => p.text)) break
  }
  assert.equal(tracing.openInvocationCount, 0)
  const spans = tracing.getFinishedSpans()
  assert.equal(new Set(spans.map((s) => s.traceId)).size, 1)
  const call_ = spans.find((s) => s.name === 'execute_tool helper')
  const inner = spans.find((s) => s.name === 'invoke_agent helper' && s.parentSpanId === call_.spanId)
  assert.equal(inner.attributes[INTERRUPTED], true)
})

for (const how of ['runGuarded', 'guardRunner on both runners']) {
  test(`a drained guarded run leaves a run its tool started on another runner going (${how})`, async () => {
    // The tool starts a run on another runner and does not wait for it (fire
    // and forget): when the guarded run is drained, that run is still going,
    // its model call not yet answered and a tool failure still to come.
    const tracing = new TracingPlugin({ exporter: 'memory' })
    const retry = new ReflectAndRetryToolPlugin()
    let release
    const gate = new Promise((r) => (release = r))
    const summarizer = agent('summarizer', [call('fail', {}), async () => (await gate, call('fail', {})), 'summary'], {
      tools: [failingTool('down')],
    })
    const background = new InMemoryRunner({ agent: summarizer, appName: 'bg', plugins: [retry, tracing] })
    let backgroundDone
    const kickoff = new FunctionTool({
      name: 'kickoff',
      description: 'starts a background summary',
      execute: async () => {
        const events = background.runAsync(request(await newSession(background), 'summarize'))
        backgroundDone = (async () => {
          for await (const ev of events) void ev
        })()
        return { started: true }
      },
    })
    const runner = new InMemoryRunner({
      agent: agent('root', [call('kickoff', {}), 'started'], { tools: [kickoff] }),
      appName: 'app',
      plugins: [retry, tracing],
    })
    const req = request(await newSession(runner))
    let events
    if (how === 'runGuarded') {
      events = runGuarded(runner, req)
    } else {
      guardRunner(runner)
      guardRunner(background)
      events = runner.runAsync(req)
    }
    for await (const ev of events) void ev
    assert.equal(tracing.openInvocationCount, 1, 'the background run is still open')
    release()
    await backgroundDone
    assert.equal(tracing.openInvocationCount, 0)
    const spans = tracing.getFinishedSpans()
    const bgRoot = spans.find((s) => s.parentSpanId === undefined && s.name === 'invoke_agent summarizer')
    assert.equal(bgRoot.attributes[INTERRUPTED], undefined)
    assert.match(bgRoot.attributes['gen_ai.output.messages'], /summary/)
    // Its retry count went on: the second failure is its second.
    const counts = spans
      .filter((s) => s.name === 'execute_tool fail' && s.traceId === bgRoot.traceId)
      .map((s) => s.attributes['adk.retry.count'])
    assert.deepEqual(counts, [1, 2])
  })
}

for (const where of ['onUserMessageCallback', 'beforeRunCallback']) {
  test(`a run a plugin registered first stops in ${where}: finished on the plugins that saw it start`, async () => {
    // Neither of this package's plugins sees the run: the one that throws
    // comes before them, or they are not registered at all.
    for (const withTracing of [true, false]) {
      for (const how of ['runGuarded', 'guardRunner']) {
        const seen = []
        const finished = []
        const spy = plugin('spy', {
          onUserMessageCallback: async ({ invocationContext }) => {
            seen.push(invocationContext.invocationId)
            return undefined
          },
        })
        spy.finishInterruptedInvocation = (id) => finished.push(id)
        const thrower = plugin('thrower', {
          [where]: async () => {
            throw new Error('no run today')
          },
        })
        const tracing = new TracingPlugin({ exporter: 'memory' })
        const root = new LlmAgent({ name: 'root', model: new ScriptedLlm(['x']) })
        const plugins = withTracing ? [spy, thrower, tracing] : [spy, thrower]
        const runner = new InMemoryRunner({ agent: root, appName: 'app', plugins })
        const req = request(await newSession(runner))
        const events = how === 'runGuarded' ? runGuarded(runner, req) : guardRunner(runner).runAsync(req)
        await assert.rejects(async () => {
          for await (const ev of events) void ev
        }, /no run today/)
        assert.equal(seen.length, 1)
        assert.deepEqual(finished, seen, `${how}, ${withTracing ? 'with' : 'without'} TracingPlugin`)
        // Stopped in beforeRunCallback, the run had started on TracingPlugin too.
        assert.equal(tracing.openInvocationCount, 0)
      }
    }
  })
}
