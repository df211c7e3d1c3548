// Retry-aware tool spans (tracing.md "Tool spans"): a ReflectAndRetryToolPlugin
// response as the final function response makes the span ERROR with
// adk.retry.count / adk.retry.outcome, whichever order the plugins run in,
// for thrown errors and for errors found in results.
import test from 'node:test'
import assert from 'node:assert/strict'
import { FunctionTool } from '@google/adk'
import { ReflectAndRetryToolPlugin } from '../index.js'
import { call, runOnce } from './helpers/scripted_llm.mjs'
import { addTool, agent, traced, byName, plugin } from './helpers/tracing_helpers.mjs'

class ValueError extends Error {
  constructor(m) {
    super(m)
    this.name = 'ValueError'
  }
}

function flaky(mode) {
  return new FunctionTool({
    name: 'flaky',
    description: 'fails',
    execute: async () => {
      if (mode === 'result') return { error: 'bad input' }
      throw new ValueError('nope')
    },
  })
}


async function runReal(order, mode, options) {
  const root = agent('a', [call('flaky', {}), call('flaky', {}), call('flaky', {}), 'gave up'], { tools: [flaky(mode)] })
  const retry = new ReflectAndRetryToolPlugin({
    maxRetries: 1,
    throwExceptionIfRetryExceeded: false,
    ...(mode === 'result' ? { resultErrorExtractor: ({ result }) => result?.error } : {}),
    ...options,
  })
  const { tracing, runner } = traced(root, order === 'before' ? { before: [retry] } : { plugins: [retry] })
  await runOnce(runner)
  const spans = byName(tracing.getFinishedSpans(), 'execute_tool flaky')
  assert.equal(spans.length, 3)
  assert.equal(tracing.openInvocationCount, 0)
  return spans
}

for (const order of ['before', 'after']) {
  for (const mode of ['thrown', 'result']) {
    test(`retry plugin ${order} tracing, error ${mode}`, async () => {
      const spans = await runReal(order, mode)
      const errorType = mode === 'thrown' ? 'Error' : 'ToolError'
      assert.deepEqual(
        spans.map((s) => [s.status.code, s.attributes['error.type'], s.attributes['adk.retry.count'], s.attributes['adk.retry.outcome']]),
        [
          [2, errorType, 1, 'retry'],
          [2, errorType, 1, 'exceeded'],
          [2, errorType, 1, 'exceeded'],
        ],
      )
    })
  }
  test(`retry plugin ${order} tracing: non-retryable`, async () => {
    const spans = await runReal(order, 'thrown', { retryPredicate: () => false })
    for (const s of spans) {
      assert.equal(s.attributes['adk.retry.outcome'], 'non_retryable')
      assert.equal(s.attributes['adk.retry.count'], 0)
    }
  })
}

// A plugin registered before both that answers onEventCallback for the
// function response events hides the event carrying the retry answer, and
// the answer to an error found in a result ends the afterToolCallback chain:
// no callback hands that answer on, so the retry plugin tells the tracing
// plugin itself (lib/retry_answers.js). A thrown error's answer reaches
// afterToolCallback as its result anyway.
for (const order of ['before', 'after']) {
  for (const mode of ['thrown', 'result']) {
    test(`retry plugin ${order} tracing, error ${mode}, the response event hidden by an earlier plugin: the same spans`, async () => {
      const hasResponse = (event) => event.content?.parts?.some((p) => p.functionResponse)
      const stopper = plugin('stopper', { onEventCallback: async ({ event }) => (hasResponse(event) ? { ...event } : undefined) })
      const root = agent('a', [call('flaky', {}), call('flaky', {}), 'gave up'], { tools: [flaky(mode)] })
      const retry = new ReflectAndRetryToolPlugin({
        maxRetries: 1,
        throwExceptionIfRetryExceeded: false,
        ...(mode === 'result' ? { resultErrorExtractor: ({ result }) => result?.error } : {}),
      })
      const { tracing, runner } = traced(root, order === 'before' ? { before: [stopper, retry] } : { before: [stopper], plugins: [retry] })
      await runOnce(runner)
      const spans = byName(tracing.getFinishedSpans(), 'execute_tool flaky')
      const errorType = mode === 'thrown' ? 'Error' : 'ToolError'
      assert.deepEqual(
        spans.map((s) => [s.status.code, s.attributes['error.type'], s.attributes['adk.retry.outcome'], s.attributes['gen_ai.tool.call.result']]),
        [
          [2, errorType, 'retry', undefined],
          [2, errorType, 'exceeded', undefined],
        ],
      )
      assert.equal(tracing.openInvocationCount, 0)
    })
  }
}

test('retry attributes do not depend on content capture', async () => {
  const root = agent('a', [call('flaky', {}), 'gave up'], { tools: [flaky('thrown')] })
  const { tracing, runner } = traced(root, { captureContent: false, plugins: [new ReflectAndRetryToolPlugin()] })
  await runOnce(runner)
  const [span] = byName(tracing.getFinishedSpans(), 'execute_tool flaky')
  assert.equal(span.attributes['adk.retry.outcome'], 'retry')
  assert.equal(span.attributes['adk.retry.count'], 1)
  assert.equal(span.attributes['gen_ai.tool.call.arguments'], undefined)
})

// Past the limit with throwExceptionIfRetryExceeded (the default), ADK emits
// no function response: the plugin's rethrow becomes an error event of the
// agent, which ends the span as ERROR (not interrupted) with the error the
// plugin threw, whichever order the plugins run in. Registered before this
// plugin, the retry plugin stops ADK's chain first: this one never sees the
// tool's error (thrown) or had already completed the call (found in the
// result, shown in neither order).
const PAST_THE_LIMIT = {
  thrown: [2, 'Error', "Error in tool 'flaky': nope"],
  result: [2, 'Error', 'A tool result reported an error and the retry limit was exceeded.'],
}
for (const order of ['before', 'after']) {
  for (const mode of ['thrown', 'result']) {
    for (const captureContent of [true, false]) {
      test(`retry plugin ${order} tracing, error ${mode} past the limit, rethrown (capture ${captureContent}): the span ends with the error thrown`, async () => {
        const root = agent('a', [call('flaky', {}), call('flaky', {}), 'gave up'], { tools: [flaky(mode)] })
        const retry = new ReflectAndRetryToolPlugin({
          maxRetries: 1,
          ...(mode === 'result' ? { resultErrorExtractor: ({ result }) => result?.error } : {}),
        })
        const { tracing, runner } = traced(root, { captureContent, ...(order === 'before' ? { before: [retry] } : { plugins: [retry] }) })
        await runOnce(runner)
        const spans = byName(tracing.getFinishedSpans(), 'execute_tool flaky')
        assert.equal(spans.length, 2)
        assert.equal(spans[0].attributes['adk.retry.outcome'], 'retry')
        const last = spans[1]
        assert.deepEqual([last.status.code, last.attributes['error.type'], last.status.message], PAST_THE_LIMIT[mode])
        assert.equal(last.attributes['gen_ai.tool.call.result'], undefined)
        assert.equal(last.attributes['weave.google_adk.interrupted'], undefined)
        assert.equal(tracing.openInvocationCount, 0)
      })
    }
  }
}

// A tool name the model invented: counted like a thrown error, and past the
// limit answered with the retry plugin's not-found text (retry.md). Either
// order, the span shows ADK's own not-found error.
for (const order of ['before', 'after']) {
  for (const captureContent of [true, false]) {
    test(`retry plugin ${order} tracing, an invented tool name (capture ${captureContent}): the same spans`, async () => {
      const root = agent('a', [call('ghost', { x: 1 }), call('ghost', { x: 2 }), 'ok'], { tools: [addTool()] })
      const retry = new ReflectAndRetryToolPlugin({ maxRetries: 1 })
      const { tracing, runner } = traced(root, { captureContent, ...(order === 'before' ? { before: [retry] } : { plugins: [retry] }) })
      await runOnce(runner)
      const spans = byName(tracing.getFinishedSpans(), 'execute_tool ghost')
      const notFound = 'Function ghost is not found in the toolsDict.'
      assert.deepEqual(
        spans.map((s) => [s.status.code, s.status.message, s.attributes['error.type'], s.attributes['adk.retry.outcome'], s.attributes['gen_ai.tool.call.result']]),
        [
          [2, notFound, 'Error', 'retry', undefined],
          [2, notFound, 'Error', undefined, undefined],
        ],
      )
    })
  }
}

test('a retry answer something later replaces: the failed call is ERROR with its error in every order', async () => {
  // The agent's own afterToolCallback, or a plugin anywhere in the chain,
  // replaces the retry plugin's answer with one of the application's. With
  // the retry plugin before the tracing plugin and the replacing plugin
  // between them, the tracing plugin sees neither the error nor the answer
  // in a callback of its own.
  const replace = (answer) => (answer?.response_type ? { app_error: answer.error_details } : undefined)
  const boom = new FunctionTool({
    name: 'boom',
    description: 'fails',
    execute: async () => {
      throw new ValueError('boom went off')
    },
  })
  // `order`: R (retry), T (tracing), X (the replacing plugin, if any).
  const spansFor = async (how, order, name) => {
    const retry = new ReflectAndRetryToolPlugin({ throwExceptionIfRetryExceeded: false })
    const rewrite = plugin('rewrite', { afterToolCallback: async ({ result }) => replace(result) })
    const root = agent('a', [call(name, {}, 'c1'), 'done'], {
      tools: [boom],
      ...(how === 'agent callback' ? { afterToolCallback: async ({ response }) => replace(response) } : {}),
    })
    const of = (letters) => [...letters].map((l) => (l === 'R' ? retry : rewrite))
    const [before, after] = order.split('T')
    const { tracing, runner } = traced(root, { before: of(before), plugins: of(after) })
    await runOnce(runner)
    const span = byName(tracing.getFinishedSpans(), `execute_tool ${name}`)[0]
    return { status: span.status, type: span.attributes['error.type'], result: span.attributes['gen_ai.tool.call.result'] }
  }
  const cases = [
    // ADK hands the callbacks its own wrapping of what the tool threw.
    ['boom', { code: 2, message: "Error in tool 'boom': boom went off" }, 'Error'],
    ['ghost', { code: 2, message: 'Function ghost is not found in the toolsDict.' }, 'Error'],
  ]
  const orders = { 'agent callback': ['RT', 'TR'], plugin: ['RTX', 'TRX', 'RXT', 'XRT', 'XTR', 'TXR'] }
  for (const how of ['agent callback', 'plugin']) {
    for (const [name, status, type] of cases) {
      for (const order of orders[how]) {
        const got = await spansFor(how, order, name)
        assert.deepEqual(got, { status, type, result: undefined }, `${how}, ${name}, order ${order}`)
      }
    }
  }
})
