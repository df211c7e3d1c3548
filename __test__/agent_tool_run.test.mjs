// AgentTool through the real runner (ADK's ESM build, imported normally): the
// sub-agent's runner gets the caller's plugins. TracingPlugin shows one tree
// (the inner run under the call's execute_tool span, same trace),
// ReflectAndRetryToolPlugin counts the inner failures under the inner
// invocation, and nothing stays open however the sub-run ends.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  AgentTool as AdkAgentTool,
  BaseAgent,
  BaseTool,
  FunctionTool,
  InMemoryRunner,
  LlmAgent,
  ParallelAgent,
  SequentialAgent,
  isAgentTool,
} from '@google/adk'
import { AgentTool, REFLECT_AND_RETRY_RESPONSE_TYPE, ReflectAndRetryToolPlugin, TracingPlugin, guardRunner, runGuarded } from '../index.js'
import { ScriptedLlm, call } from './helpers/scripted_llm.mjs'
import { addTool, newSession, one, parallelWithStuckSubRun, plugin, request } from './helpers/tracing_helpers.mjs'

const INTERRUPTED = 'weave.google_adk.interrupted'

/** A tool that fails its first `failures` calls (every call by default). */
function flakyTool(name = 'flaky', failures = Infinity) {
  let calls = 0
  return new FunctionTool({
    name,
    description: `fails ${failures} times`,
    execute: async () => {
      if (calls++ < failures) throw new Error(`${name} is down`)
      return { ok: true }
    },
  })
}

/** A plugin that records which invocations of which agent it saw start. */
function recorder() {
  const starts = []
  const p = plugin('recorder', {
    async onUserMessageCallback({ invocationContext }) {
      // `this`: the instance each runner called (the same one in both).
      starts.push({ id: invocationContext.invocationId, agent: invocationContext.agent?.name, self: this })
      return undefined
    },
  })
  p.starts = starts
  p.idOf = (agent) => starts.find((s) => s.agent === agent)?.id
  return p
}

function setup(root) {
  const retry = new ReflectAndRetryToolPlugin()
  const tracing = new TracingPlugin({ exporter: 'memory' })
  const rec = recorder()
  const runner = new InMemoryRunner({ agent: root, appName: 'app', plugins: [retry, tracing, rec] })
  return { retry, tracing, rec, runner }
}

async function drain(events) {
  const out = []
  for await (const ev of events) out.push(ev)
  return out
}

const failAgain = (retry, invocationId, tool = 'flaky') =>
  retry.onToolErrorCallback({ tool: { name: tool }, toolArgs: {}, toolContext: { invocationId }, error: new Error('again') })

const parentOf = (spans, span) => spans.find((s) => s.spanId === span.parentSpanId)

/** The inner run's root: the `invoke_agent <agent>` span under `execute_tool <tool>`. */
function innerRoot(spans, agent, tool = agent) {
  const call = one(spans, `execute_tool ${tool}`)
  const found = spans.filter((s) => s.name === `invoke_agent ${agent}` && s.parentSpanId === call.spanId)
  assert.equal(found.length, 1, `one invoke_agent ${agent} under execute_tool ${tool}: ${spans.map((s) => s.name).join(', ')}`)
  return found[0]
}

test('a drop-in for ADK AgentTool: same name, declaration and brand', () => {
  const sub = new LlmAgent({ name: 'helper', description: 'helps out', model: new ScriptedLlm([]) })
  const ours = new AgentTool({ agent: sub, skipSummarization: true })
  const theirs = new AdkAgentTool({ agent: sub, skipSummarization: true })
  assert.ok(ours instanceof AdkAgentTool)
  assert.ok(ours instanceof BaseTool)
  assert.ok(ours instanceof AgentTool)
  assert.ok(isAgentTool(ours))
  assert.equal(ours.name, 'helper')
  assert.equal(ours.description, 'helps out')
  assert.equal(ours.skipSummarization, true)
  assert.deepEqual(ours._getDeclaration(), theirs._getDeclaration())
  assert.equal(Object.getPrototypeOf(AgentTool), AdkAgentTool)
  class Mine extends AgentTool {
    extra() {
      return this.name
    }
  }
  const mine = new Mine({ agent: sub })
  assert.ok(mine instanceof Mine && mine instanceof AdkAgentTool)
  assert.equal(mine.extra(), 'helper')
})

test("the sub-agent's tool failure gets retry guidance, and the trace is one tree", async () => {
  const subLlm = new ScriptedLlm([call('flaky', {}), call('flaky', {}), 'sub done'])
  const sub = new LlmAgent({ name: 'helper', description: 'helps', model: subLlm, tools: [flakyTool('flaky', 1)] })
  const rootLlm = new ScriptedLlm([call('helper', { request: 'do it' }), 'all done'])
  const root = new LlmAgent({ name: 'root', model: rootLlm, tools: [new AgentTool({ agent: sub })] })
  const { tracing, rec, runner } = setup(root)
  await drain(runner.runAsync(request(await newSession(runner))))

  // Retry guidance reached the sub-agent's model.
  const [guidance] = subLlm.newFunctionResponses(1)
  assert.equal(guidance.name, 'flaky')
  assert.equal(guidance.response.response_type, REFLECT_AND_RETRY_RESPONSE_TYPE)
  assert.equal(guidance.response.retry_count, 1)
  // The sub-agent's answer reached the caller's model.
  assert.deepEqual(rootLlm.newFunctionResponses(1).map((r) => r.response), [{ result: 'sub done' }])
  // Same plugin instances in both runners.
  assert.deepEqual(rec.starts.map((s) => s.agent), ['root', 'helper'])
  assert.ok(rec.starts.every((s) => s.self === rec))

  const spans = tracing.getFinishedSpans()
  assert.equal(tracing.openInvocationCount, 0)
  const roots = spans.filter((s) => s.parentSpanId === undefined)
  assert.equal(roots.length, 1, 'no new root')
  assert.equal(roots[0].name, 'invoke_agent root')
  assert.ok(spans.every((s) => s.traceId === roots[0].traceId), 'one trace')
  const call_ = one(spans, 'execute_tool helper')
  const rootAgent = parentOf(spans, call_)
  assert.equal(rootAgent.name, 'invoke_agent root')
  assert.equal(rootAgent.parentSpanId, roots[0].spanId)
  const inner = innerRoot(spans, 'helper')
  assert.equal(inner.attributes['gen_ai.agent.id'], rec.idOf('helper'))
  assert.equal(inner.attributes[INTERRUPTED], undefined)
  const innerAgent = spans.find((s) => s.name === 'invoke_agent helper' && s.parentSpanId === inner.spanId)
  assert.ok(innerAgent, 'the sub-agent span under the inner root')
  const innerChats = spans.filter((s) => s.name.startsWith('chat') && s.attributes['gen_ai.agent.name'] === 'helper')
  assert.equal(innerChats.length, 3)
  assert.ok(innerChats.every((s) => s.parentSpanId === innerAgent.spanId))
  const flaky = spans.filter((s) => s.name === 'execute_tool flaky')
  assert.equal(flaky.length, 2)
  assert.ok(flaky.every((s) => s.parentSpanId === innerAgent.spanId))
  assert.equal(flaky[0].attributes['adk.retry.count'], 1)
  assert.equal(flaky[0].status.code, 2)
  assert.equal(flaky[1].status.code, 0)
  // The inner root ended inside the call's span.
  assert.ok(inner.startTimeUnixNano >= call_.startTimeUnixNano && inner.endTimeUnixNano <= call_.endTimeUnixNano)
})

test('the inner run counts failures under its own invocation and forgets them when it ends', async () => {
  const sub = new LlmAgent({
    name: 'helper',
    model: new ScriptedLlm([call('flaky', {}), 'sub done']),
    tools: [flakyTool()],
  })
  const rootLlm = new ScriptedLlm([call('flaky', {}), call('helper', { request: 'x' }), call('flaky', {}), 'done'])
  const root = new LlmAgent({ name: 'root', model: rootLlm, tools: [flakyTool(), new AgentTool({ agent: sub })] })
  const { retry, rec, runner } = setup(root)
  await drain(runner.runAsync(request(await newSession(runner))))
  const counts = (llm, i) => llm.newFunctionResponses(i).map((r) => r.response.retry_count)
  assert.deepEqual(counts(rootLlm, 1), [1])
  assert.deepEqual(counts(sub.model, 1), [1], 'the inner run starts its own count')
  assert.deepEqual(counts(rootLlm, 3), [2], "the caller's count went on, untouched by the inner run")
  assert.equal((await failAgain(retry, rec.idOf('helper'))).retry_count, 1, 'inner scope dropped at its end')
})

test('nested AgentTools nest in the one trace', async () => {
  const leaf = new LlmAgent({ name: 'leaf', model: new ScriptedLlm(['leaf done']) })
  const mid = new LlmAgent({
    name: 'mid',
    model: new ScriptedLlm([call('leaf', { request: 'deeper' }), 'mid done']),
    tools: [new AgentTool({ agent: leaf })],
  })
  const root = new LlmAgent({
    name: 'root',
    model: new ScriptedLlm([call('mid', { request: 'go' }), 'done']),
    tools: [new AgentTool({ agent: mid })],
  })
  const { tracing, runner } = setup(root)
  await drain(runner.runAsync(request(await newSession(runner))))
  const spans = tracing.getFinishedSpans()
  assert.equal(tracing.openInvocationCount, 0)
  assert.equal(spans.filter((s) => s.parentSpanId === undefined).length, 1)
  assert.equal(new Set(spans.map((s) => s.traceId)).size, 1)
  const midRoot = innerRoot(spans, 'mid')
  const leafRoot = innerRoot(spans, 'leaf')
  // leaf's call is made by mid's agent span, under mid's inner root.
  const leafCall = parentOf(spans, leafRoot)
  const midAgent = parentOf(spans, leafCall)
  assert.equal(midAgent.name, 'invoke_agent mid')
  assert.equal(midAgent.parentSpanId, midRoot.spanId)
  assert.equal(parentOf(spans, parentOf(spans, midRoot)).name, 'invoke_agent root')
})

test("an AgentTool over one of the caller's own sub-agents: the inner root is that agent, not the top of its tree", async () => {
  const helper = new LlmAgent({ name: 'helper', description: 'helps out', model: new ScriptedLlm(['helped']) })
  const root = new LlmAgent({
    name: 'root',
    description: 'the top',
    model: new ScriptedLlm([call('helper', { request: 'go' }), 'done']),
    subAgents: [helper],
    tools: [new AgentTool({ agent: helper })],
  })
  const { tracing, runner } = setup(root)
  await drain(runner.runAsync(request(await newSession(runner))))
  const spans = tracing.getFinishedSpans()
  const inner = innerRoot(spans, 'helper')
  assert.equal(inner.attributes['gen_ai.agent.name'], 'helper')
  assert.equal(inner.attributes['gen_ai.agent.description'], 'helps out')
  // The inner run never ran root: its helper agent span is the inner root's child.
  const helperAgents = spans.filter((s) => s.name === 'invoke_agent helper' && s.parentSpanId === inner.spanId)
  assert.equal(helperAgents.length, 1, spans.map((s) => s.name).join(', '))
  assert.equal(spans.filter((s) => s.name === 'invoke_agent root').length, 2, "the outer run's root and its agent span only")
})

/**
 * root is a ParallelAgent: branch `a` calls the AgentTool `helper`, whose
 * model waits on `gate` after its tool failed once; branch `b` answers once
 * that failure happened. The consumer breaks on b's answer: mid-sub-run.
 */
function parallelWithPendingSubRun() {
  let failed
  const innerFailed = new Promise((resolve) => (failed = resolve))
  let release
  const gate = new Promise((resolve) => (release = resolve))
  const helper = new LlmAgent({
    name: 'helper',
    model: new ScriptedLlm([
      call('flaky', {}),
      async () => {
        failed()
        await gate
        return 'sub done'
      },
    ]),
    tools: [flakyTool()],
  })
  const a = new LlmAgent({
    name: 'a',
    model: new ScriptedLlm([call('helper', { request: 'go' }), 'a done']),
    tools: [new AgentTool({ agent: helper })],
  })
  const b = new LlmAgent({
    name: 'b',
    model: new ScriptedLlm([
      async () => {
        await innerFailed
        return 'b done'
      },
    ]),
  })
  const root = new ParallelAgent({ name: 'par', subAgents: [a, b] })
  return { root, release }
}

const isAnswerOf = (author) => (ev) => ev.author === author && ev.content?.parts?.some((p) => p.text)

for (const guarded of [true, false]) {
  test(`an outer break mid-sub-run (${guarded ? 'runGuarded' : "api.md's manual finishInterruptedInvocation"})`, async () => {
    const { root, release } = parallelWithPendingSubRun()
    const { retry, tracing, rec, runner } = setup(root)
    const req = request(await newSession(runner))
    let outerId
    try {
      for await (const ev of guarded ? runGuarded(runner, req) : runner.runAsync(req)) {
        outerId ??= ev.invocationId
        if (isAnswerOf('b')(ev)) break
      }
    } finally {
      if (!guarded) {
        retry.finishInterruptedInvocation(outerId)
        tracing.finishInterruptedInvocation(outerId)
      }
    }
    // The sub-run is still waiting on its model; both plugins closed it.
    const innerId = rec.idOf('helper')
    assert.ok(innerId)
    assert.equal(tracing.openInvocationCount, 0)
    const spans = tracing.getFinishedSpans()
    assert.equal(new Set(spans.map((s) => s.traceId)).size, 1)
    const inner = innerRoot(spans, 'helper')
    assert.equal(inner.attributes[INTERRUPTED], true)
    const pendingChat = spans.filter((s) => s.name.startsWith('chat') && s.attributes['gen_ai.agent.name'] === 'helper')
    assert.equal(pendingChat.at(-1).attributes[INTERRUPTED], true)
    // The inner invocation is finished on the retry plugin too: by
    // runGuarded, or by finishing the outer one (its AgentTool run).
    assert.equal((await failAgain(retry, innerId)).retry_count, 1)
    // The sub-run going on afterwards changes nothing.
    const before = spans.length
    release()
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r))
    assert.equal(tracing.openInvocationCount, 0)
    assert.equal(tracing.getFinishedSpans().length, before)
  })
}

// An abort ends ADK's generator as if the run were drained; it cut the run
// short all the same, so the sub-run it left waiting is finished too.
for (const api of ['runGuarded', 'guardRunner']) {
  test(`an outer abort mid-sub-run finishes the sub-run on every plugin (${api})`, async () => {
    const { root, release } = parallelWithPendingSubRun()
    const { retry, tracing, rec, runner } = setup(root)
    const controller = new AbortController()
    // ADK checks the signal right after onEventCallback: the iteration ends there.
    runner.pluginManager.registerPlugin(
      plugin('aborter', {
        onEventCallback: async ({ event }) => {
          if (isAnswerOf('b')(event)) controller.abort()
          return undefined
        },
      }),
    )
    const finished = []
    rec.finishInterruptedInvocation = (id) => finished.push(id)
    const req = { ...request(await newSession(runner)), abortSignal: controller.signal }
    await drain(api === 'runGuarded' ? runGuarded(runner, req) : guardRunner(runner).runAsync(req))
    assert.ok(controller.signal.aborted)
    const innerId = rec.idOf('helper')
    assert.ok(innerId)
    assert.ok(finished.includes(innerId), 'the sub-run finished on a foreign plugin too')
    assert.equal((await failAgain(retry, innerId)).retry_count, 1, 'inner scope dropped')
    assert.equal(tracing.openInvocationCount, 0)
    assert.equal(innerRoot(tracing.getFinishedSpans(), 'helper').attributes[INTERRUPTED], true)
    release()
  })
}

test('an abort inside the sub-run leaves nothing open', async () => {
  const controller = new AbortController()
  // The abort comes while the inner runner handles the sub-agent's second
  // answer: it stops there, before its afterRunCallback; the caller stops at
  // its next event.
  const aborter = plugin('aborter', {
    onEventCallback: async ({ event }) => {
      if (event.author === 'helper' && event.content?.parts?.[0]?.text === 'stopping') controller.abort()
      return undefined
    },
  })
  const sub = new LlmAgent({
    name: 'helper',
    model: new ScriptedLlm([call('flaky', {}), 'stopping', 'never']),
    tools: [flakyTool()],
  })
  const rootLlm = new ScriptedLlm([call('helper', { request: 'x' }), 'never'])
  const root = new LlmAgent({ name: 'root', model: rootLlm, tools: [new AgentTool({ agent: sub })] })
  const { retry, tracing, rec, runner } = setup(root)
  runner.pluginManager.registerPlugin(aborter)
  const finished = []
  rec.finishInterruptedInvocation = (id) => finished.push(id)
  await drain(runGuarded(runner, { ...request(await newSession(runner)), abortSignal: controller.signal }))
  assert.ok(controller.signal.aborted)
  assert.equal(rootLlm.requests.length, 1)
  assert.equal(sub.model.requests.length, 2)
  assert.equal(tracing.openInvocationCount, 0)
  const spans = tracing.getFinishedSpans()
  assert.equal(spans.filter((s) => s.parentSpanId === undefined).length, 1)
  assert.equal(innerRoot(spans, 'helper').attributes[INTERRUPTED], true)
  assert.equal((await failAgain(retry, rec.idOf('helper'))).retry_count, 1, 'inner scope dropped')
  // Both invocations finished on every plugin, once each.
  assert.deepEqual(finished.sort(), [rec.idOf('root'), rec.idOf('helper')].sort())
})

/** A sub-agent that throws out of its run. */
class Thrower extends BaseAgent {
  async *runAsyncImpl() {
    throw new Error('sub-agent exploded')
  }
  async *runLiveImpl() {}
}

test('a throw inside the sub-agent leaves nothing open and reaches the caller as a tool error', async () => {
  // helper: `worker` fails a tool once (a count in the inner scope), then
  // `thrower` throws out of the inner run (no afterRunCallback).
  const worker = new LlmAgent({
    name: 'worker',
    model: new ScriptedLlm([call('flaky', {}), 'worked']),
    tools: [flakyTool()],
  })
  const sub = new SequentialAgent({ name: 'helper', subAgents: [worker, new Thrower({ name: 'thrower' })] })
  const rootLlm = new ScriptedLlm([call('helper', { request: 'x' }), 'gave up'])
  const root = new LlmAgent({ name: 'root', model: rootLlm, tools: [new AgentTool({ agent: sub })] })
  const { retry, tracing, rec, runner } = setup(root)
  // No runGuarded: the caller's run goes on; the AgentTool closes its own.
  await drain(runner.runAsync(request(await newSession(runner))))
  const [answer] = rootLlm.newFunctionResponses(1)
  assert.equal(answer.response.response_type, REFLECT_AND_RETRY_RESPONSE_TYPE)
  assert.equal(answer.response.error_details, 'sub-agent exploded')
  assert.equal(tracing.openInvocationCount, 0)
  const spans = tracing.getFinishedSpans()
  assert.equal(spans.filter((s) => s.parentSpanId === undefined).length, 1)
  assert.equal(innerRoot(spans, 'helper').attributes[INTERRUPTED], true)
  assert.equal(one(spans, 'execute_tool flaky').attributes['adk.retry.count'], 1)
  assert.equal(one(spans, 'execute_tool helper').status.code, 2)
  assert.equal((await failAgain(retry, rec.idOf('helper'))).retry_count, 1, 'inner scope dropped')
})

test("ending the caller gives the inner run's tool spans the results their callbacks saw", async () => {
  // An earlier plugin answers onEventCallback for the sub-agent's tool
  // response, so TracingPlugin keeps the result afterToolCallback saw; the
  // consumer then breaks while the sub-run waits on its model.
  const swallow = plugin('swallow', {
    onEventCallback: async ({ event }) =>
      event.author === 'helper' && event.content?.parts?.some((p) => p.functionResponse) ? { ...event } : undefined,
  })
  const tracing = new TracingPlugin({ exporter: 'memory', captureContent: true })
  const runner = new InMemoryRunner({
    agent: parallelWithStuckSubRun({ a: 2, b: 3 }),
    appName: 'app',
    plugins: [swallow, tracing],
  })
  for await (const ev of runGuarded(runner, request(await newSession(runner)))) {
    if (isAnswerOf('b')(ev)) break
  }
  assert.equal(tracing.openInvocationCount, 0)
  const spans = tracing.getFinishedSpans()
  assert.equal(innerRoot(spans, 'helper').attributes[INTERRUPTED], true)
  assert.deepEqual(JSON.parse(one(spans, 'execute_tool add').attributes['gen_ai.tool.call.result']), { sum: 5 })
})
